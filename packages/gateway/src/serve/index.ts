export { descriptionPrefix, EXPOSED_TOOL_NAME, exposedToolName, presentTool } from '../catalog/present.js';
export {
  buildServerCatalog,
  type CatalogEntry,
  type ServerCatalog,
  type WithheldEntry,
  withheldLine,
} from './catalog.js';
export { createEndpointServer } from './endpoint.js';
export { Gateway, type GatewayOptions, type ServerState } from './gateway.js';
export {
  generateToken,
  type Identity,
  isLoopbackAddress,
  ListenError,
  parseListenAddress,
  serveHttp,
  type TokenResolver,
  tokensEqual,
} from './http.js';
export * from './pipeline/index.js';
export { newSessionId, type RunningGateway, runGateway, type ServeOptions } from './run.js';
export { SERVER_INFO } from './server-info.js';
