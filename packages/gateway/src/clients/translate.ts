import { basename } from 'node:path';
import { RESERVED_SERVER_NAMES, SERVER_NAME } from '../config/servers.js';
import { ARGUMENT_SECRET_ADVICE, findSecretArgument } from '../credentials/arguments.js';
import { parseNpmRequest } from '../images/npm-fetch.js';
import { redactArgs, redactValue } from '../text/redact.js';
import { ringfenceEntryOf } from './entries.js';
import type { ClientEntry } from './formats.js';
import { translateMcpRemote, translateUrlEntry } from './remote.js';

import type { Translation } from './translation.js';

export type { Translation } from './translation.js';

const skip = (reason: string): Translation => ({ kind: 'skip', reason });

/**
 * The command a contained server would run, refused when an argument carries a credential: the
 * client passed it on the command line, and ringfence passes credentials only as variables.
 */
function secretInCommand(rest: readonly string[]): Translation | undefined {
  const found = findSecretArgument(rest, 'full');
  if (!found) return undefined;
  return skip(
    `argument ${found.index + 1} after the package or image carries a credential (${found.why}; the value is not shown). ${ARGUMENT_SECRET_ADVICE}.`,
  );
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
const record = (value: unknown): Record<string, string> =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, String(v)]))
    : {};
const pairs = (map: Record<string, string>) => Object.entries(map).map(([k, v]) => `${k}=${v}`);

const PLACEHOLDER = /\$\{[^}]*\}/;
const NO_NETWORK =
  'it now has no network (ringfence’s default); if it needs hosts, register it again with --egress-allow HOST';
const BY_HAND = 'add it by hand: ringfence mcp add NAME (--npm PKG@VERSION | --image REF | --url URL)';

/**
 * Read one entry of a client's config as `mcp add` flags, or say why it cannot be: ringfence
 * runs npm packages and images in containers and reaches remote servers over streamable HTTP;
 * anything else runs a program of this machine that ringfence cannot contain.
 */
export function translateEntry(entry: ClientEntry): Translation {
  if (ringfenceEntryOf(entry)) return { kind: 'ringfence' };
  if (entry.disabled === true) return skip('it is disabled in the client; enable it first if you want it');
  const env = record(entry.env);
  const headers = record(entry.headers);
  const values = [
    ...strings(entry.args),
    ...Object.values(env),
    ...Object.values(headers),
    String(entry.url ?? ''),
  ];
  if (values.some((value) => PLACEHOLDER.test(value))) {
    return skip(
      `its settings use \${…} placeholders that the client fills in at start; ringfence stores values, so ${BY_HAND} -e KEY=VALUE`,
    );
  }
  if (typeof entry.envFile === 'string')
    return skip(`its environment comes from a file (envFile); ${BY_HAND} -e KEY=VALUE`);
  if (typeof entry.url === 'string') return translateUrlEntry(entry, headers);
  if (typeof entry.command !== 'string') return skip('it has neither a command nor a url');
  const program = basename(entry.command).replace(/\.(cmd|exe)$/i, '');
  const args = strings(entry.args);
  if (program === 'npx') return translateNpx(args, env);
  if ((program === 'docker' || program === 'podman') && args[0] === 'run')
    return translateDockerRun(args.slice(1), env);
  if (
    program === 'uvx' ||
    program === 'uv' ||
    program === 'pipx' ||
    program === 'python' ||
    program === 'python3'
  ) {
    return skip(
      `it runs a Python program (${program}), which ringfence does not build into an image; use an image of it (ringfence mcp add NAME --image REF), or an npm package if there is one`,
    );
  }
  return skip(
    `it runs a program of this machine (${program}), which ringfence cannot contain as it is; build an image for it and add that (ringfence mcp add NAME --image REF)`,
  );
}

const NPX_FLAGS = new Set(['-y', '--yes', '-q', '--quiet', '--no-install']);

function translateNpx(args: string[], env: Record<string, string>): Translation {
  let i = 0;
  while (i < args.length && NPX_FLAGS.has(args[i]!)) i++;
  if (args[i] === '--') i++;
  const spec = args[i];
  if (!spec || spec.startsWith('-'))
    return skip(
      `npx ${redactArgs(args).join(' ')}: only npx [-y] PACKAGE[@VERSION] ARGS… is understood; ${BY_HAND}`,
    );
  try {
    parseNpmRequest(spec);
  } catch {
    return skip(
      `"${redactValue(spec)}" is not a package from the npm registry (a path, URL or git spec); ${BY_HAND}`,
    );
  }
  const rest = args.slice(i + 1);
  if (parseNpmRequest(spec).name === 'mcp-remote') return translateMcpRemote(rest);
  const refused = secretInCommand(rest);
  if (refused) return refused;
  return {
    kind: 'register',
    input: {
      npm: spec,
      ...(rest.length > 0 ? { command: rest } : {}),
      ...(Object.keys(env).length > 0 ? { env: pairs(env) } : {}),
    },
    notes: [NO_NETWORK],
  };
}

/** docker run flags that take a value and that ringfence sets itself (network, user, limits…). */
const DOCKER_VALUE_FLAGS = new Set([
  '--name',
  '--network',
  '--net',
  '-p',
  '--publish',
  '-u',
  '--user',
  '-w',
  '--workdir',
  '-m',
  '--memory',
  '--cpus',
  '--pull',
  '--platform',
  '-l',
  '--label',
  '-h',
  '--hostname',
  '--add-host',
  '--dns',
  '--cap-add',
  '--cap-drop',
  '--security-opt',
  '--tmpfs',
  '--ulimit',
  '--pids-limit',
  '--restart',
]);
const DOCKER_QUIET_FLAGS = new Set(['-i', '--interactive', '-t', '--tty', '-it', '--rm', '--init']);

function translateDockerRun(args: string[], clientEnv: Record<string, string>): Translation {
  const env: Record<string, string> = {};
  const mounts: string[] = [];
  const notes: string[] = [];
  let i = 0;
  const value = (flag: string): string | undefined => {
    const arg = args[i]!;
    if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
    i++;
    return args[i];
  };
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    const arg = args[i]!;
    const flag = arg.split('=')[0]!;
    if (DOCKER_QUIET_FLAGS.has(flag)) continue;
    if (flag === '-e' || flag === '--env') {
      const pair = value(flag) ?? '';
      const eq = pair.indexOf('=');
      const key = eq === -1 ? pair : pair.slice(0, eq);
      // `-e KEY` passes the client's value for KEY, which the entry's env block holds.
      const found = eq === -1 ? clientEnv[key] : pair.slice(eq + 1);
      if (found === undefined)
        return skip(
          `-e ${key} takes its value from the client's environment, which ringfence cannot see; ${BY_HAND} -e ${key}=VALUE`,
        );
      env[key] = found;
    } else if (flag === '--entrypoint') {
      return skip(`it replaces the image's entrypoint (--entrypoint); ${BY_HAND}`);
    } else if (flag === '--env-file') {
      return skip(
        `its environment comes from a file (--env-file ${redactValue(value(flag) ?? '')}); ${BY_HAND} -e KEY=VALUE`,
      );
    } else if (flag === '-v' || flag === '--volume' || flag === '--mount') {
      const spec = value(flag) ?? '';
      const mount = workspaceMount(flag, spec);
      if (mount) mounts.push(mount);
      else
        notes.push(
          `mount ${redactValue(spec)} not carried: ringfence mounts only workspace subfolders (PATH → /workspace/PATH, the workspace being the folder mcp serve runs in); register it again with --mount PATH[:rw] if the server needs it`,
        );
    } else if (DOCKER_VALUE_FLAGS.has(flag)) {
      notes.push(
        `${redactArgs([flag, value(flag) ?? '']).join(' ')} not carried: ringfence sets the container's network, user and limits itself`,
      );
    } else {
      notes.push(`${redactArgs([arg]).join(' ')} not carried: not a docker run flag ringfence maps`);
    }
  }
  const image = args[i];
  if (!image) return skip('docker run without an image');
  const rest = args.slice(i + 1);
  const refused = secretInCommand(rest);
  if (refused) return refused;
  return {
    kind: 'register',
    input: {
      image,
      ...(rest.length > 0 ? { command: rest } : {}),
      ...(Object.keys(env).length > 0 ? { env: pairs(env) } : {}),
      ...(mounts.length > 0 ? { mounts } : {}),
    },
    notes: [...notes, NO_NETWORK],
  };
}

/**
 * `-v ./REL:/workspace/REL[:ro]` (or `--mount type=bind,…`) with REL inside: ringfence's rule, with
 * docker's mode (read-write unless `ro`).
 */
function workspaceMount(flag: string, spec: string): string | undefined {
  let source: string;
  let target: string;
  let readOnly: boolean;
  if (flag === '--mount') {
    const fields = Object.fromEntries(
      spec.split(',').map((f) => [f.split('=')[0], f.split('=')[1] ?? 'true']),
    );
    if ((fields.type ?? 'volume') !== 'bind') return undefined;
    source = fields.source ?? fields.src ?? '';
    target = fields.target ?? fields.destination ?? fields.dst ?? '';
    readOnly = fields.readonly === 'true' || fields.ro === 'true';
  } else {
    const [src = '', dst = '', mode = ''] = spec.split(':');
    // A bare name is a named volume to docker, not a folder: only ./PATH binds a folder.
    if (!src.startsWith('./')) return undefined;
    source = src;
    target = dst;
    readOnly = mode.split(',').includes('ro');
  }
  const rel = source.replace(/^\.\//, '');
  if (rel === '' || rel.startsWith('/') || rel.split('/').includes('..') || target !== `/workspace/${rel}`)
    return undefined;
  return readOnly ? rel : `${rel}:rw`;
}

/** A registration name for a client's entry name: ringfence's name rule, unique among `taken`. */
export function serverNameFor(clientName: string, taken: ReadonlySet<string>): string {
  const base =
    clientName
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 28) || 'server';
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (SERVER_NAME.test(name) && !taken.has(name) && !RESERVED_SERVER_NAMES.has(name)) return name;
  }
}
