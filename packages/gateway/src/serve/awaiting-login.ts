import { callLimitsOf } from '../config/limits.js';
import type { ServerConfig } from '../config/servers.js';
import { type PinStore, pinnedOf } from '../pins/store.js';
import { UpstreamError } from '../ports/errors.js';
import type { CallOptions, UpstreamRequests } from '../ports/upstream.js';
import type { ServerListings } from './listings.js';

// A remote server whose OAuth login is needed (remote-auth/: none yet, expired, revoked, a
// step-up) is not dropped: its pinned tools and prompts stay listed, and a call to one first
// tries the server again (a login made meanwhile is picked up without restarting `mcp serve`),
// else answers with the login-needed words that name the command.

/**
 * The tool the gateway lists for a server awaiting a login that has nothing pinned yet (its
 * first login was never made): without it the client would see nothing of the server, and could
 * not be told what to do. A call answers the login-needed words; after a login, the server's own
 * tools replace it. Its words are the gateway's (no server text), rendered like any definition.
 */
export const LOGIN_TOOL = 'login_needed';

const loginTool = (server: string) => ({
  name: LOGIN_TOOL,
  title: `Log in to ${server}`,
  description: `ringfence: ${server} needs an OAuth login before its own tools can be listed. Call this tool to be told why and the command the person runs (ringfence mcp auth login ${server}). Once logged in, ${server}'s own tools replace this one.`,
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true, openWorldHint: false },
});

/**
 * What the server was last pinned with, as if it had listed exactly that (tools and prompts);
 * with nothing pinned, the gateway's {@link LOGIN_TOOL} (`placeholder`).
 */
export async function pinnedListings(
  pins: PinStore,
  server: string,
): Promise<ServerListings & { placeholder: boolean }> {
  const record = await pins.server(server);
  const definitions = (kind: 'tool' | 'prompt') =>
    record ? Object.values(pinnedOf(record, kind)).map((pin) => pin.definition) : [];
  const [tools, prompts] = [definitions('tool'), definitions('prompt')];
  const placeholder = tools.length === 0 && prompts.length === 0;
  return {
    rawTools: placeholder ? [loginTool(server)] : tools,
    rawPrompts: prompts,
    problems: [],
    placeholder,
  };
}

/**
 * The pin store as a dry run: the catalog of what is pinned is built through the same
 * reconciliation as a listing, but nothing of it is written (a pending review is kept as it is).
 */
export function readOnlyPins(pins: PinStore): PinStore {
  return {
    path: pins.path,
    read: () => pins.read(),
    server: (name: string) => pins.server(name),
    update: async <R>(change: (file: Awaited<ReturnType<PinStore['read']>>) => R | Promise<R>) =>
      change(structuredClone(await pins.read())),
  } as unknown as PinStore;
}

/** Whether what a request names is still exposed as it was when the call was decided. */
export type StillExposed = (kind: 'tool' | 'prompt', name: string) => boolean;

/**
 * The side of a server awaiting its login that requests reach: each one brings the server up
 * (`revive`: single-flight in the registry; it rejects with the login-needed error while no
 * login is usable), then is sent to it if what it names was not changed by the server meanwhile.
 */
export function awaitingLoginSide(
  config: ServerConfig,
  revive: () => Promise<UpstreamRequests>,
  stillExposed: StillExposed,
  /** The gateway listed its {@link LOGIN_TOOL} for this server (nothing of its own is pinned). */
  placeholder = false,
): UpstreamRequests {
  const host = config.transport === 'http' ? new URL(config.url).host : config.name;
  const checked = async (kind: 'tool' | 'prompt', name: string) => {
    const upstream = await revive();
    if (!stillExposed(kind, name))
      throw new UpstreamError(
        'SERVER_NOT_STARTED',
        `${config.name} is logged in again, but its ${kind} ${JSON.stringify(name)} changed since it was pinned and is withheld: review it with ringfence mcp pins diff ${config.name}`,
      );
    return upstream;
  };
  return {
    name: config.name,
    destination: `remote ${host}`,
    limits: callLimitsOf(config),
    capabilities: () => ({
      prompts: false,
      completions: false,
      logging: false,
      resources: false,
      subscribe: false,
    }),
    callTool: async (name: string, args: Record<string, unknown>, options?: CallOptions) => {
      if (placeholder && name === LOGIN_TOOL) {
        // Still no login: revive rejects with the login-needed words (a tool result naming the
        // command). Logged in meanwhile: the server is up, its own tools are listed instead.
        await revive();
        return {
          content: [
            {
              type: 'text',
              text: `ringfence: ${config.name} is logged in now; its own tools are listed in place of this one (list the tools again if your client has not).`,
            },
          ],
        };
      }
      return (await checked('tool', name)).callTool(name, args, options);
    },
    getPrompt: async (name: string, args: Record<string, string>, options?: CallOptions) =>
      (await checked('prompt', name)).getPrompt(name, args, options),
    readResource: async (uri: string, options?: CallOptions) => (await revive()).readResource(uri, options),
    complete: async (params: Record<string, unknown>, options?: { signal?: AbortSignal }) =>
      (await revive()).complete(params, options),
    subscribeResource: async (uri: string, subscribe: boolean) =>
      (await revive()).subscribeResource(uri, subscribe),
    setLoggingLevel: async (level: string) => (await revive()).setLoggingLevel(level),
  };
}
