export { type CreateRequest, parseCreate, parseRun, type RunRequest, SANDBOX_NAME } from './args.js';
export { SandboxError, type SandboxErrorCode } from './errors.js';
export { listAllSandboxes, type PersonSandbox, removeSandbox, sandboxLogs } from './person.js';
export { Sandboxes, type SandboxesOptions, type SandboxSummary } from './sandboxes.js';
export { OwnServer } from './server.js';
export { SANDBOX_USER, sandboxContainerSpec, sandboxLabels } from './spec.js';
export { OWN_SERVER, OWN_TOOL_NAMES, OWN_TOOLS } from './tools.js';
