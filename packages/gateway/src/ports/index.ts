// The contracts that serve/ and runtime/ share: each layer depends on these, never on the other.
export type { AuditSink } from './audit.js';
export type { Caller, CallToolResult } from './caller.js';
export { UpstreamError, type UpstreamErrorCode } from './errors.js';
export { LOCAL_ONLY, type PolicyRef, type PolicyView } from './policy.js';
export type { SchemaAnswer, SchemaChecks } from './schema.js';
export {
  type CallOptions,
  type CallProgress,
  type ContainedServer,
  type ContainedStdio,
  type ContainerLauncher,
  DEFAULT_TIMEOUTS,
  type PromptListing,
  type ToolListing,
  type Upstream,
  type UpstreamCapabilities,
  type UpstreamRequests,
  type UpstreamTimeouts,
} from './upstream.js';
