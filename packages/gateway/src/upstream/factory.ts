import type { ServerConfig } from '../config/servers.js';
import { RemoteUpstream } from './remote.js';
import type { Upstream, UpstreamTimeouts } from './types.js';
import { DEFAULT_TIMEOUTS } from './types.js';

/** Everything a container upstream needs from the serving process (provided by the runtime). */
export type ContainerUpstreamFactory = (
  config: Extract<ServerConfig, { transport: 'container' }>,
) => Upstream;

export function upstreamFactory(options: {
  timeouts?: UpstreamTimeouts;
  container?: ContainerUpstreamFactory;
  /** Why there is no container factory (the engine's answer), for the refusal. */
  containerUnavailable?: string;
}): (config: ServerConfig) => Upstream {
  return (config) => {
    if (config.transport === 'http') return new RemoteUpstream(config, options.timeouts ?? DEFAULT_TIMEOUTS);
    if (!options.container) {
      throw new Error(
        'contained servers are unavailable: no container engine answers. Run `ringfence doctor` for the fix',
      );
    }
    return options.container(config);
  };
}
