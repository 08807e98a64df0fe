/**
 * @ringfence/policy — the organisation policy: canonical JSON, DSSE envelopes signed with
 * Ed25519, a trust root with roles, thresholds, rotation and expiry, verification with
 * rollback protection, and pure evaluation helpers for the gateway.
 *
 * @packageDocumentation
 */

export { type VerifyPolicyFilesOptions, verifyPolicyFiles } from './authoring/files.js';
// Authoring helpers used by the CLI.
export { readPolicySource, SourceError, type SourceErrorCode } from './authoring/source.js';
export { summarizePolicy } from './authoring/summary.js';
// Canonical JSON, digests and the strict reader: shared with the gateway.
export {
  CanonicalError,
  type CanonicalErrorCode,
  canonicalBytes,
  canonicalize,
  digestOf,
  sha256Hex,
} from './canonical/canonicalize.js';
// Keys and signatures.
export {
  checkPublicKey,
  type Ed25519KeyPair,
  generateKeyPair,
  hasCanonicalScalar,
  keyPairFromSeed,
  type PublicKeyProblem,
  verifyStrict,
} from './crypto/ed25519.js';
export {
  addSignatures,
  countSignatures,
  type Envelope,
  type EnvelopeSignature,
  type OpenedEnvelope,
  openEnvelope,
  POLICY_PAYLOAD_TYPE,
  pae,
  ROOT_PAYLOAD_TYPE,
  signEnvelope,
  type ThresholdCount,
  type TrustedKey,
} from './envelope/envelope.js';
export { isRingfenceError, RingfenceError } from './errors.js';
// Evaluation.
export {
  allowedTools,
  allowsServerRequest,
  type CallContext,
  type CallDecision,
  decideCall,
  type EgressCeiling,
  egressCeiling,
  firstSight,
  type ImageIdentity,
  isEgressWithinCeiling,
  isImageAllowed,
  isReadOnlyTool,
  isToolAllowed,
  maxCallSeconds,
  orgPins,
  ruleMatches,
  type ServerRequestKind,
} from './evaluate/evaluate.js';
export { globMatches } from './evaluate/glob.js';
// Files: atomic writes and cross-process locks.
export { ensurePrivateDirectory, type WriteFileAtomicOptions, writeFileAtomic } from './fs/atomic.js';
export { FsError, type FsErrorCode } from './fs/errors.js';
export { FileLease, type FileLeaseOptions, type FileLockOptions, withFileLock } from './fs/lock.js';
// Installed policy and local state.
export { INSTALLED, installedPolicyDir } from './installed/files.js';
export { type InstallPolicyOptions, installPolicy } from './installed/install.js';
export {
  type InstalledPolicyResult,
  type LoadInstalledOptions,
  loadInstalledPolicy,
} from './installed/load.js';
// JSON Pointers (RFC 6901), read through own properties only: shared with the gateway and the CLI.
export {
  escapePointerToken,
  MISSING,
  type PointerOptions,
  resolvePointer,
} from './json/pointer.js';
export { JsonError, type JsonErrorCode, parseStrictJson, type StrictJsonOptions } from './json/strict.js';
export { KeyError, type KeyErrorCode } from './keys/errors.js';
export {
  keyFiles,
  type PrivateKeyFile,
  type PublicKey,
  type PublicKeyFile,
  readPrivateKeyFile,
  readPublicKeyFile,
  writeKeyPair,
} from './keys/keyfile.js';
export { keyIdOf } from './keys/keyid.js';
// Policy.
export { parseDateTime } from './policy/datetime.js';
export { POLICY_SCHEMA } from './policy/schema.js';
export type {
  Action,
  Condition,
  FirstSight,
  PinKind,
  Policy,
  PolicyOAuth,
  PolicyPin,
  PolicyServer,
  Rule,
} from './policy/types.js';
export { PIN_KINDS, pinSubject } from './policy/types.js';
export { type PolicyValidation, validatePolicy } from './policy/validate.js';
export {
  type SeenPolicyVersion,
  signPolicy,
  type VerifiedPolicy,
  type VerifyPolicyOptions,
  verifyPolicy,
} from './policy/verify.js';
// Trust root.
export { type BuildRootInput, buildRoot, signRoot } from './root/create.js';
export {
  checkRootPayload,
  type RootPayload,
  type RootRole,
  type TrustedRoot,
  type VerifyRootOptions,
  verifyRootChain,
} from './root/root.js';
export { ROOT_SCHEMA } from './root/schema.js';
export {
  type PolicyState,
  policyStatePath,
  readPolicyState,
  recordAccepted,
  ringfenceHome,
  StateError,
  type StateErrorCode,
  trustedRootFromState,
  updatePolicyState,
} from './state/state.js';
// Verification results.
export { VERIFY_CODES, type VerifyCode, type VerifyFailure, type VerifyResult } from './verify/result.js';
