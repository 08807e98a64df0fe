export { describeAuditLine } from './describe.js';
export { type EgressInput, egressInputFromProxyLine } from './egress.js';
export { AuditError, type AuditErrorCode } from './errors.js';
export {
  canonicalForm,
  checkEntryShape,
  contentDigest,
  hashLine,
  PrecomputedDigest,
  type ShapeCheck,
  serializeEntry,
} from './format.js';
export { AuditLog, type AuditLogOptions, type AuditTimings, defaultAuditPath } from './log.js';
export {
  type AuditLogLine,
  type AuditTail,
  type FollowOptions,
  followAuditLog,
  readAuditTail,
} from './tail.js';
export {
  AUDIT_FILE_NAME,
  AUDIT_GENESIS,
  AUDIT_STRING_MAX,
  AUDIT_TYPES,
  type AuditActor,
  type AuditDigest,
  type AuditEntry,
  type AuditInput,
  type AuditPolicyRef,
  type AuditType,
  type DecisionEntry,
  type DecisionRefs,
  type EgressEntry,
  type EgressRefs,
  type GatewayStartEntry,
  type ResultEntry,
  type ResultRefs,
  type StartRefs,
} from './types.js';
export { type AuditVerifyCode, type AuditVerifyResult, verifyAuditLog } from './verify.js';
