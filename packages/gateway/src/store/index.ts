export {
  expectObject,
  expectOnlyKeys,
  JsonStore,
  StoreError,
  type StoreErrorCode,
} from './json-store.js';
