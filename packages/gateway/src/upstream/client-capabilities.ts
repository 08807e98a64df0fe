import { ProtocolErrorCode } from '@modelcontextprotocol/client';
import { MissingClientCapability } from '../ports/errors.js';
import type { ClientGrants } from '../ports/upstream.js';
import { needsTasksExtension } from '../tasks/wire.js';

/**
 * The client capabilities a request to an MCP 2026-07-28 server declares in its `_meta` envelope
 * (`io.modelcontextprotocol/clientCapabilities`): what the calling client declared, as far as the
 * server's registration (capped by the policy) lets ringfence relay it. Built from two sets of
 * booleans, never copied from the caller's `_meta`: nothing a caller adds there reaches a server.
 * `roots` always: ringfence answers a server's roots itself, from its mounts, whoever calls.
 * Elicitation is declared as form only, the one mode ringfence relays.
 */
export function declaredCapabilities(
  grants: ClientGrants,
  caller: ClientGrants | undefined,
): Record<string, Record<string, unknown>> {
  return {
    roots: {},
    ...(grants.sampling && caller?.sampling === true ? { sampling: {} } : {}),
    ...(grants.elicitation && caller?.elicitation === true ? { elicitation: { form: {} } } : {}),
  };
}

/** How many capabilities of a -32021 error's `requiredCapabilities` are passed on, at most. */
const MAX_REQUIRED = 16;
/** A capability's settings (as JSON) longer than this are passed on as `{}`. */
const MAX_SETTINGS_CHARS = 1024;
/** A capability name as the spec's are (`sampling`, `io.example/thing`): anything else is dropped. */
const CAPABILITY_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$/;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A server's `-32021` (MissingRequiredClientCapability) as a `MissingClientCapability`, or
 * undefined for any other error. Its `requiredCapabilities` are bounded (at most 16 names of the
 * spec's form, each one's settings up to 1 KiB of JSON): they are the server's, passed on to the
 * client. The message says, per capability, whether the client did not declare it or ringfence
 * did not pass it on (the registration does not allow it), and what to do. A -32021 naming the
 * tasks extension is left as it came: the pipeline says of it what it is (`needsTasksExtension`).
 */
export function missingCapabilityOf(
  error: unknown,
  server: string,
  grants: ClientGrants,
  caller: ClientGrants | undefined,
): MissingClientCapability | undefined {
  if ((error as { code?: unknown })?.code !== ProtocolErrorCode.MissingRequiredClientCapability)
    return undefined;
  if (needsTasksExtension(error)) return undefined;
  const data = (error as { data?: unknown }).data;
  const named =
    isPlainObject(data) && isPlainObject(data.requiredCapabilities) ? data.requiredCapabilities : {};
  const required: Record<string, Record<string, unknown>> = {};
  for (const [name, settings] of Object.entries(named)) {
    if (Object.keys(required).length >= MAX_REQUIRED) break;
    if (!CAPABILITY_NAME.test(name)) continue;
    const kept = isPlainObject(settings) ? settings : {};
    required[name] = JSON.stringify(kept).length <= MAX_SETTINGS_CHARS ? kept : {};
  }
  const serverMessage = String((error as { message?: unknown }).message ?? '');
  return new MissingClientCapability(whatToDo(server, required, grants, caller), serverMessage, required);
}

/** Per capability the server named: who lacks it, and what to do about it. */
function whatToDo(
  server: string,
  required: Record<string, unknown>,
  grants: ClientGrants,
  caller: ClientGrants | undefined,
): string {
  const names = Object.keys(required);
  if (names.length === 0)
    return `${server} needs a client capability that this request did not declare (it did not say which)`;
  const sentences = names.map((name) => {
    if (name !== 'sampling' && name !== 'elicitation')
      return `${server} needs the client capability ${name}, which ringfence does not pass on`;
    if (caller?.[name] !== true)
      return `${server} needs ${name}, which this client did not declare: use a client that offers ${name === 'sampling' ? 'sampling' : 'form elicitation'}`;
    if (!grants[name])
      return `${server} needs ${name}, which this client declared but ringfence did not pass on: the server's registration (within the organisation policy) does not allow it; to allow it, register the server again with --allow-${name} (ringfence mcp rm ${server}, then ringfence mcp add ${server} … --allow-${name})`;
    return `${server} needs ${name}, which ringfence passed on as declared (form elicitation only, for elicitation)`;
  });
  return sentences.join('; ');
}
