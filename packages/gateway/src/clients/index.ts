export { describeEntry, type Launch, ringfenceEntry, ringfenceEntryOf } from './entries.js';
export {
  CLIENT_KINDS,
  type ClientConfig,
  type ClientEntry,
  ClientError,
  type ClientErrorCode,
  type ClientKind,
  clientKind,
  FORMATS,
  readClientConfig,
} from './formats.js';
export { type ImportOptions, type ImportResult, type ImportRow, importClient } from './import.js';
export { importedCredentialName, type MovedSecrets, moveSecretsToStore } from './import-store.js';
export { type SetupOptions, type SetupResult, setupClient } from './setup.js';
export { serverNameFor, type Translation, translateEntry } from './translate.js';
