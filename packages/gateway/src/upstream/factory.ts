import type { HttpServerConfig, ServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import {
  type ContainerLauncher,
  DEFAULT_TIMEOUTS,
  type Upstream,
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { ContainerUpstream } from './container.js';
import type { EraMemory } from './era.js';
import type { RequestAuthorizer } from './http-transport.js';
import { RemoteUpstream } from './remote.js';

export function upstreamFactory(options: {
  timeouts?: UpstreamTimeouts;
  /** Runs contained servers (the runtime's); absent when no engine answers. */
  container?: ContainerLauncher;
  /** Why there is no container factory (the engine's answer), for the refusal. */
  containerUnavailable?: string;
  /** Where each server's era verdict is kept (`EraStore`); absent: every start probes. */
  eras?: EraMemory;
  /** An OAuth registration's token holder (remote-auth `TokenHolder`); undefined for others. */
  authorizer?: (config: HttpServerConfig) => RequestAuthorizer | undefined;
  /** A remote server's `@secret:` header values → the stored values, at each connection. */
  resolveSecrets?: (config: HttpServerConfig) => Promise<HttpServerConfig>;
}): (config: ServerConfig) => Upstream {
  return (config) => {
    const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
    if (config.transport === 'http')
      return new RemoteUpstream(
        config,
        timeouts,
        options.eras,
        options.authorizer?.(config),
        options.resolveSecrets,
      );
    if (!options.container) {
      throw new UpstreamError(
        'CONTAINERS_UNAVAILABLE',
        'contained servers are unavailable: no container engine answers. Run `ringfence doctor` for the fix',
      );
    }
    const launch = options.container;
    return new ContainerUpstream(config, launch(config), timeouts, options.eras, () => launch(config));
  };
}
