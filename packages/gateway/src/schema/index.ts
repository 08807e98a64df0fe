export { offerEarlyWorker, SCHEMA_WORKER_LIMITS } from './early-worker.js';
export { SchemaGuard, type SchemaGuardOptions, type ToolResultLike } from './guard.js';
export { SchemaGuardError } from './limits.js';
export { passThroughJsonSchemaValidator } from './sdk-validator.js';
export {
  DEFAULT_SCHEMA_LIMITS,
  MAX_VALUE_DEPTH,
  type SchemaGuardLimits,
  type SchemaReasonCode,
  type SchemaVerdict,
} from './types.js';
export { vetSchema } from './vet.js';
