export { ContainerUpstream } from './container.js';
export { upstreamFactory } from './factory.js';
export { UpstreamClient } from './mcp-client.js';
export { RemoteUpstream } from './remote.js';
export { StreamTransport } from './stream-transport.js';
