import { EgressProxyError } from '../errors.js';
import type { EgressProxyOptions } from '../proxy.js';

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

export interface CliOptions {
  readonly help: boolean;
  readonly lifeline: boolean;
  readonly proxy: EgressProxyOptions;
}

const usage = (message: string): never => {
  throw new EgressProxyError('EGRESS_USAGE', `${message}\nRun ringfence-egress-proxy --help for usage.`);
};

function positiveInt(flag: string, text: string, max: number): number {
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    usage(`${flag} takes a whole number from 1 to ${max}, not "${text}"`);
  }
  return Number(text);
}

export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || port > 65535)
    usage(`--listen takes HOST:PORT (e.g. 127.0.0.1:3128 or [::1]:3128), not "${text}"`);
  return { host: (m?.[1] ?? m?.[2]) as string, port };
}

/**
 * Parses the command line. Hidden flags (`--dns-server`, `--connect-timeout-ms`,
 * `--header-timeout-ms`, `--dns-timeout-ms`) exist for tests and are not part of the contract.
 */
export function parseArgs(argv: readonly string[]): CliOptions {
  let listen: { host: string; port: number } | undefined;
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
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const next = argv[i + 1];
      if (next === undefined) usage(`${flag} needs a value`);
      i++;
      return next as string;
    };
    switch (flag) {
      case '--help':
      case '-h':
        help = true;
        break;
      case '--listen':
        listen = parseListen(value());
        break;
      case '--allow':
        allow.push(value());
        break;
      case '--allow-address':
        allowAddresses.push(value());
        break;
      case '--resolve':
        resolve.push(value());
        break;
      case '--lifeline':
        lifeline = true;
        break;
      case '--max-tunnels':
        maxTunnels = positiveInt(flag, value(), 1_000_000);
        break;
      case '--idle-timeout':
        idleTimeoutSec = positiveInt(flag, value(), 86_400);
        break;
      case '--dns-server':
        dnsServers.push(value());
        break;
      case '--connect-timeout-ms':
        connectTimeoutMs = positiveInt(flag, value(), 600_000);
        break;
      case '--header-timeout-ms':
        headerTimeoutMs = positiveInt(flag, value(), 600_000);
        break;
      case '--dns-timeout-ms':
        dnsTimeoutMs = positiveInt(flag, value(), 600_000);
        break;
      default:
        usage(`unknown argument "${arg}"`);
    }
  }
  if (help) return { help, lifeline, proxy: { host: '', port: 0, allow: [] } };
  if (!listen) return usage('--listen HOST:PORT is required');
  if (allow.length === 0)
    usage('at least one --allow HOST[:PORT] is required (the proxy refuses everything else)');
  return {
    help,
    lifeline,
    proxy: {
      host: listen.host,
      port: listen.port,
      allow,
      allowAddresses,
      resolve,
      dnsServers,
      ...(maxTunnels !== undefined ? { maxTunnels } : {}),
      ...(idleTimeoutSec !== undefined ? { idleTimeoutSec } : {}),
      ...(connectTimeoutMs !== undefined ? { connectTimeoutMs } : {}),
      ...(headerTimeoutMs !== undefined ? { headerTimeoutMs } : {}),
      ...(dnsTimeoutMs !== undefined ? { dnsTimeoutMs } : {}),
    },
  };
}
