export { BACKEND_LABEL, type BackendKind } from './backend.js';
export { CLASS_HOSTS, CREDENTIAL_CLASSES, guessClass, hostsOutsideClass } from './classes.js';
export { CredentialError, type CredentialErrorCode } from './errors.js';
export type { CredentialClass, KnownCredential, KnownCredentials } from './known.js';
export { StoredCredentials } from './known-source.js';
export {
  checkSecretReferences,
  credentialRefusal,
  resolveSecretReferences,
  SECRET_PREFIX,
  type SecretReference,
  secretReferenceName,
  secretReferences,
} from './references.js';
export {
  type BackendStatus,
  backendChoiceFrom,
  CREDENTIAL_NAME,
  type CredentialRecord,
  CredentialStore,
  validateCredentialName,
} from './store.js';
