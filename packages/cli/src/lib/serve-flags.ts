import * as Flags from '@oclif/core/flags';
import { parse } from '@oclif/core/parser';
import { parseByteSize } from './byte-size.js';

/** `--session` names containers and networks. */
export const SESSION_FLAG = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const SESSION_FLAG_MESSAGE =
  'it must be 1-32 lower-case letters, digits or "-" (it names containers and networks). Give one such as --session my-client-1, or leave the flag out for a random one.';

// `mcp serve`'s flags, declared once: the oclif command (help, manifest) and the bundled fast path
// (serve-main.ts) parse with these same definitions and oclif's own parser.
export const serveFlags = {
  http: Flags.string({
    description: 'serve streamable HTTP on HOST:PORT instead of stdio (bearer token required)',
  }),
  'insecure-listen': Flags.boolean({ description: 'allow --http or --metrics on a non-loopback address' }),
  metrics: Flags.string({
    description:
      'serve Prometheus metrics at http://[HOST:]PORT/metrics (HOST defaults to 127.0.0.1; another address needs --insecure-listen and the bearer token) and GET /healthz',
    helpValue: '[HOST:]PORT',
  }),
  'session-idle': Flags.integer({
    description: '--http: close a session after this many seconds without a request [default: 1800]',
    min: 1,
    helpValue: 'SECONDS',
  }),
  'max-sessions': Flags.integer({
    description:
      "--http: sessions one token may hold; a new one ends that token's least recently used idle one [default: 32]",
    min: 1,
    helpValue: 'N',
  }),
  session: Flags.string({
    description: 'session id, 1-32 of a-z, 0-9 and "-" (default: random)',
    // Checked while parsing, so the oclif command and the bundled fast path refuse it alike.
    parse: async (input) => {
      if (SESSION_FLAG.test(input)) return input;
      // `oclif`: the fast path hands a refusal it carries to oclif, which prints it and exits 2.
      throw Object.assign(new Error(SESSION_FLAG_MESSAGE), { oclif: { exit: 2 } });
    },
  }),
  only: Flags.string({
    description:
      'serve only this registered server, under its own tool and prompt names (no SERVER_ prefix): one client entry per server',
  }),
  'sandbox-tools': Flags.boolean({
    description:
      "also serve ringfence's own tools (ringfence_status, sandbox_*): contained sandboxes the assistant creates and runs commands in, decided and audited as server ringfence (docs/sandboxes.md). Off unless given",
  }),
  'sandbox-image': Flags.string({
    description:
      '--sandbox-tools: an image sandboxes may be made from, exactly as named (repeatable; never pulled)',
    multiple: true,
    helpValue: 'IMAGE',
  }),
  'sandbox-save-cap': Flags.string({
    description:
      '--sandbox-tools: the most disk sandbox checkpoints and snapshots may take together, such as 2g or 500m; 0 turns saving off [default: 10g]',
    helpValue: 'SIZE',
    parse: async (input) => {
      if (parseByteSize(input) !== undefined) return input;
      throw Object.assign(
        new Error('--sandbox-save-cap must be a size such as 10g, 500m or 0 (saving off).'),
        {
          oclif: { exit: 2 },
        },
      );
    },
  }),
  'sandbox-persistent': Flags.boolean({
    description:
      '--sandbox-tools: the assistant may make persistent sandboxes (sandbox_create persistent: true), which outlive this gateway until removed (ringfence sandbox rm); later gateways of this home may use them',
  }),
  sandbox: Flags.string({
    description:
      'the sandbox the assistant itself works in: written as `sandbox` in every audit entry of this gateway (1-32 of a-z, 0-9 and "-")',
    helpValue: 'NAME',
    parse: async (input) => {
      if (SESSION_FLAG.test(input)) return input;
      throw Object.assign(
        new Error(
          '--sandbox must be a sandbox name: 1-32 lower-case letters, digits or "-" (as sandbox_create names them).',
        ),
        { oclif: { exit: 2 } },
      );
    },
  }),
  'sandbox-allow-address': Flags.string({
    description:
      '--sandbox-tools: a private address range (CIDR) the hosts a sandbox names may resolve into, as --egress-allow-address for a server (repeatable; within the policy)',
    multiple: true,
    helpValue: 'CIDR',
  }),
  'allow-mount': Flags.string({
    description:
      'another directory mounts may come from, DIR or DIR:rw (the current directory always may, writable)',
    multiple: true,
  }),
};

/** oclif's parse of `mcp serve ARGV`, as the command's own `this.parse` runs it. */
export function parseServeFlags(argv: readonly string[]) {
  return parse([...argv], { flags: serveFlags, args: {}, strict: true });
}
