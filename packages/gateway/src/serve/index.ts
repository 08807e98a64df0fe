export {
  descriptionPrefix,
  EXPOSED_NAME,
  exposedName,
  type Naming,
  PREFIXED,
  presentPrompt,
  presentTool,
} from '../catalog/present.js';
export {
  buildServerCatalog,
  type CatalogEntry,
  type PromptArgument,
  type PromptEntry,
  type ServerCatalog,
  type WithheldEntry,
  withheldLine,
  withheldReason,
} from './catalog.js';
export { completionArgs } from './completion.js';
export { createEndpointServer, rpcError } from './endpoint.js';
export { Gateway, type GatewayOptions } from './gateway.js';
export {
  DEFAULT_SESSION_IDLE_MS,
  DEFAULT_SESSIONS_PER_TOKEN,
  generateToken,
  type Identity,
  isLoopbackAddress,
  ListenError,
  parseListenAddress,
  type SessionLimits,
  serveHttp,
  type TokenResolver,
  tokensEqual,
} from './http.js';
export {
  DEFAULT_LOG_RATE,
  LOG_LEVELS,
  LogRateLimit,
  type LogRateOptions,
  LogRelay,
  type RelayedLog,
  relayedLog,
} from './log-relay.js';
export * from './pipeline/index.js';
export {
  type OfferedCapabilities,
  type RegistryOptions,
  ServerRegistry,
  type ServerState,
  type Target,
} from './registry.js';
export { newSessionId, type RunningGateway, runGateway, type ServeOptions } from './run.js';
export { SERVER_INFO } from './server-info.js';
