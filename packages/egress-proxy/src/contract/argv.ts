import { parseArgs } from 'node:util';
import { parseAllowEntry } from './allow.js';
import { parseCidr } from './cidr.js';
import { EgressProxyError } from './errors.js';
import { parseResolvePins } from './resolve-pins.js';

export const USAGE = `usage: ringfence-egress-proxy --listen HOST:PORT --allow HOST[:PORT] ...
                              [--allow-address CIDR ...] [--resolve NAME=IP ...]
                              [--lifeline] [--max-tunnels N] [--idle-timeout SEC]

An allowlisting HTTP(S) forward proxy. CONNECT tunnels and absolute-URI http:// requests reach
only the allowed hosts (exact names, or *.domain for names below domain), on ports 80 and 443
unless an entry names a port. IP literals are refused; names are resolved once and refused if
any answer is loopback, private, link-local, CGNAT, multicast, reserved or the proxy itself.

  --listen HOST:PORT     address to listen on (e.g. 0.0.0.0:3128, [::]:3128)
  --allow HOST[:PORT]    allow a host, or *.domain for the names below it (repeatable)
  --allow-address CIDR   exempt an address range from the forbidden ranges (repeatable)
  --resolve NAME=IP      answer NAME with IP instead of asking DNS; still range-checked (repeatable)
  --lifeline             exit when standard input ends (the parent holds it open)
  --max-tunnels N        refuse CONNECT with 429 past N open tunnels (default 1024)
  --idle-timeout SEC     close a tunnel idle in both directions for SEC seconds (default 300)
  --help                 show this text

One JSON line per attempt and per closed tunnel is written to standard output.
Exit codes: 0 stopped, 1 failure, 2 usage.`;

/** Exit codes of the sidecar process. */
export const EXIT = { stopped: 0, failure: 1, usage: 2 } as const;

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** What the gateway decides about a sidecar: the flags that are part of the contract. */
export interface SidecarArgvInput {
  readonly listen: ListenAddress;
  /** `--allow` entries: `HOST`, `HOST:PORT`, `*.DOMAIN`, `*.DOMAIN:PORT`. At least one. */
  readonly allow: readonly string[];
  /** `--allow-address` CIDRs exempted from the forbidden ranges. */
  readonly allowAddresses?: readonly string[];
  /** `--resolve` pins, `NAME=IP`. */
  readonly resolve?: readonly string[];
  /** `--lifeline`: exit when standard input ends. */
  readonly lifeline?: boolean;
  readonly maxTunnels?: number;
  readonly idleTimeoutSec?: number;
}

/** A parsed command line that starts a proxy. */
export interface SidecarArgs {
  readonly help: false;
  readonly listen: ListenAddress;
  readonly allow: readonly string[];
  readonly allowAddresses: readonly string[];
  readonly resolve: readonly string[];
  readonly lifeline: boolean;
  readonly maxTunnels?: number;
  readonly idleTimeoutSec?: number;
  /** Hidden flags for tests (`--dns-server`, `--*-timeout-ms`): not part of the contract. */
  readonly dnsServers: readonly string[];
  readonly connectTimeoutMs?: number;
  readonly headerTimeoutMs?: number;
  readonly dnsTimeoutMs?: number;
}

export type SidecarInvocation = { readonly help: true } | SidecarArgs;

const usage = (message: string): never => {
  throw new EgressProxyError('EGRESS_USAGE', `${message}\nRun ringfence-egress-proxy --help for usage.`);
};

function positiveInt(flag: string, text: string, max: number): number {
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    usage(`${flag} takes a whole number from 1 to ${max}, not "${text}"`);
  }
  return Number(text);
}

export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || port > 65535)
    usage(`--listen takes HOST:PORT (e.g. 127.0.0.1:3128 or [::1]:3128), not "${text}"`);
  return { host: (m?.[1] ?? m?.[2]) as string, port };
}

export function formatListen(listen: ListenAddress): string {
  return listen.host.includes(':') ? `[${listen.host}]:${listen.port}` : `${listen.host}:${listen.port}`;
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  listen: { type: 'string' },
  allow: { type: 'string' },
  'allow-address': { type: 'string' },
  resolve: { type: 'string' },
  lifeline: { type: 'boolean' },
  'max-tunnels': { type: 'string' },
  'idle-timeout': { type: 'string' },
  'dns-server': { type: 'string' },
  'connect-timeout-ms': { type: 'string' },
  'header-timeout-ms': { type: 'string' },
  'dns-timeout-ms': { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;

/**
 * Parses the sidecar's command line and validates every value (allow entries, ranges, pins), so
 * a typo is a usage error before anything listens. `node:util` splits `--flag=value` and
 * `--flag value`; the walk over its tokens keeps the proxy's own messages and refuses what it
 * would let through (unknown flags, positionals, `-hh` groups, a value on a switch).
 */
export function parseSidecarArgv(argv: readonly string[]): SidecarInvocation {
  const { tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  let listen: ListenAddress | undefined;
  const allow: string[] = [];
  const allowAddresses: string[] = [];
  const resolve: string[] = [];
  const dnsServers: string[] = [];
  let lifeline = false;
  let help = false;
  let maxTunnels: number | undefined;
  let idleTimeoutSec: number | undefined;
  let connectTimeoutMs: number | undefined;
  let headerTimeoutMs: number | undefined;
  let dnsTimeoutMs: number | undefined;
  for (const token of tokens) {
    const arg = argv[token.index] ?? '';
    if (
      token.kind !== 'option' ||
      !Object.hasOwn(OPTIONS, token.name) ||
      // Only `-h` itself is a short flag: a group such as `-hh` or `-h=1` is not.
      (!token.rawName.startsWith('--') && arg !== token.rawName)
    ) {
      return usage(`unknown argument "${arg}"`);
    }
    const flag = token.rawName.startsWith('--') ? token.rawName : `--${token.name}`;
    const name = token.name as OptionName;
    if (OPTIONS[name].type === 'boolean') {
      // A switch given a value (`--lifeline=false`) would otherwise be read as on.
      if (token.value !== undefined) usage(`${flag} takes no value, not "${token.value}"`);
    } else if (token.value === undefined) {
      usage(`${flag} needs a value`);
    }
    const value = token.value ?? '';
    switch (name) {
      case 'help':
        help = true;
        break;
      case 'listen':
        listen = parseListen(value);
        break;
      case 'allow':
        allow.push(value);
        break;
      case 'allow-address':
        allowAddresses.push(value);
        break;
      case 'resolve':
        resolve.push(value);
        break;
      case 'lifeline':
        lifeline = true;
        break;
      case 'max-tunnels':
        maxTunnels = positiveInt(flag, value, 1_000_000);
        break;
      case 'idle-timeout':
        idleTimeoutSec = positiveInt(flag, value, 86_400);
        break;
      case 'dns-server':
        dnsServers.push(value);
        break;
      case 'connect-timeout-ms':
        connectTimeoutMs = positiveInt(flag, value, 600_000);
        break;
      case 'header-timeout-ms':
        headerTimeoutMs = positiveInt(flag, value, 600_000);
        break;
      case 'dns-timeout-ms':
        dnsTimeoutMs = positiveInt(flag, value, 600_000);
        break;
    }
  }
  if (help) return { help };
  if (!listen) return usage('--listen HOST:PORT is required');
  if (allow.length === 0)
    usage('at least one --allow HOST[:PORT] is required (the proxy refuses everything else)');
  allow.forEach(parseAllowEntry);
  allowAddresses.forEach(parseCidr);
  parseResolvePins(resolve);
  return {
    help,
    listen,
    allow,
    allowAddresses,
    resolve,
    lifeline,
    dnsServers,
    ...(maxTunnels !== undefined ? { maxTunnels } : {}),
    ...(idleTimeoutSec !== undefined ? { idleTimeoutSec } : {}),
    ...(connectTimeoutMs !== undefined ? { connectTimeoutMs } : {}),
    ...(headerTimeoutMs !== undefined ? { headerTimeoutMs } : {}),
    ...(dnsTimeoutMs !== undefined ? { dnsTimeoutMs } : {}),
  };
}

/**
 * The sidecar's command line for `input`. It is checked with the proxy's own parser before it is
 * returned, so a value the proxy would refuse fails here, with the proxy's message, rather than
 * as a sidecar that exits at start.
 */
export function buildSidecarArgv(input: SidecarArgvInput): string[] {
  const argv = ['--listen', formatListen(input.listen)];
  if (input.lifeline) argv.push('--lifeline');
  for (const host of input.allow) argv.push('--allow', host);
  for (const cidr of input.allowAddresses ?? []) argv.push('--allow-address', cidr);
  for (const pin of input.resolve ?? []) argv.push('--resolve', pin);
  if (input.maxTunnels !== undefined) argv.push('--max-tunnels', String(input.maxTunnels));
  if (input.idleTimeoutSec !== undefined) argv.push('--idle-timeout', String(input.idleTimeoutSec));
  parseSidecarArgv(argv);
  return argv;
}
