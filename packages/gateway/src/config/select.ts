import { ConfigError, type ServerConfig } from './servers.js';

/**
 * The registered servers to serve: all, or the one `--only` names (refused when it is not
 * registered). Here rather than in serve/ so that `mcp serve` can start the selected containers
 * before the served endpoint's code is loaded.
 */
export function selectServers(registered: readonly ServerConfig[], only: string | undefined): ServerConfig[] {
  if (only === undefined) return [...registered];
  const found = registered.find((server) => server.name === only);
  if (found) return [found];
  const names = registered.map((server) => server.name);
  throw new ConfigError(
    'SERVER_UNKNOWN',
    `--only ${only}: no server of that name is registered (${names.length > 0 ? `registered: ${names.join(', ')}` : 'none is registered'}). See them with: ringfence mcp ls`,
  );
}
