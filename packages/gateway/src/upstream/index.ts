export { ContainerUpstream } from './container.js';
export { connectInEra, type EraMemory } from './era.js';
export { upstreamFactory } from './factory.js';
export { UpstreamClient } from './mcp-client.js';
export { headerValue, paramHeaders, standardHeaders } from './mcp-headers.js';
export { RemoteUpstream } from './remote.js';
export { StreamTransport } from './stream-transport.js';
