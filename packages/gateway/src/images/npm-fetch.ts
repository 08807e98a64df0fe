import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GatewayError } from '../errors.js';
import type { NpmSpec } from './npm-server.js';

const run = promisify(execFile);

/** What `--npm` asked for: a name and an exact version, a range, a tag, or nothing (`latest`). */
export interface NpmRequest {
  readonly name: string;
  readonly wanted: string;
}

const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;
export const EXACT_VERSION = /^\d+\.\d+\.\d+(?:[-+][\w.+-]*)?$/;

/** `PKG`, `PKG@EXACT`, `PKG@RANGE` or `PKG@TAG` (scoped or not). */
export function parseNpmRequest(spec: string): NpmRequest {
  const text = spec.trim();
  const at = text.indexOf('@', 1);
  const name = at === -1 ? text : text.slice(0, at);
  const wanted = at === -1 ? 'latest' : text.slice(at + 1);
  // The range goes to npm as one argument (never a shell), but keep it to what npm ranges use.
  if (!NAME.test(name) || wanted === '' || !/^[\w.^~<>=|*+ -]+$/.test(wanted)) {
    throw new GatewayError(
      'IMAGE_CONTEXT',
      `"${spec}" is not an npm package (PACKAGE, PACKAGE@VERSION or PACKAGE@RANGE, e.g. @modelcontextprotocol/server-memory@2026.8.31).`,
    );
  }
  return { name, wanted };
}

export interface FetchedPackage {
  readonly spec: NpmSpec;
  /** The folder npm installed into: its node_modules and package-lock.json feed the image. */
  readonly dir: string;
  readonly fetched: boolean;
  /** Packages of the closure that declare install scripts, which were not run. */
  readonly skippedScripts: readonly string[];
}

export interface FetchOptions {
  /** RINGFENCE_HOME: packages are kept under npm/ in it. */
  readonly home: string;
  /** The npm command (tests point it elsewhere); `npm` on PATH by default. */
  readonly npm?: string;
  readonly env?: NodeJS.ProcessEnv;
}

const folderName = (spec: NpmSpec) => `${spec.name.replace('/', '+')}@${spec.version}`;

/** The npm failures that mean the registry could not be reached at all. */
const UNREACHABLE = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|ENETUNREACH|EHOSTUNREACH)\b/;

function npmFailure(error: unknown, what: string, request: string): GatewayError {
  const e = error as NodeJS.ErrnoException & { stderr?: string };
  if (e.code === 'ENOENT') {
    return new GatewayError(
      'NPM_FETCH',
      `ringfence fetches npm packages with npm, and npm was not found on PATH. Install Node.js with npm, or install ${request} yourself (npm install --ignore-scripts ${request}) and run ringfence mcp add from that folder.`,
    );
  }
  const stderr = String(e.stderr ?? '');
  const npmSaid =
    stderr
      .split('\n')
      .filter((line) => /npm (error|ERR!)/.test(line) && !/A complete log|log of this run/.test(line))
      .slice(0, 3)
      .map((line) => line.replace(/^npm (error|ERR!)\s*/, '').trim())
      .filter(Boolean)
      .join('; ') || String(e.message).split('\n')[0];
  const offline = UNREACHABLE.exec(stderr);
  if (offline) {
    return new GatewayError(
      'NPM_FETCH',
      `Could not reach the npm registry to ${what} (${offline[1]}; npm said: ${npmSaid}). ringfence fetches from the registry npm is configured with (npm config get registry). On a machine without access: point npm at a registry mirror you can reach (npm config set registry URL), or copy the package here and install it yourself (npm install --ignore-scripts ${request}), then run ringfence mcp add from that folder.`,
    );
  }
  if (/\bE404\b/.test(stderr) || /\bETARGET\b/.test(stderr)) {
    return new GatewayError(
      'NPM_FETCH',
      `The npm registry has no ${request} (npm said: ${npmSaid}). Check the name and version (npm view ${request.replace(/@[^@]*$/, '')} versions) and run this again.`,
    );
  }
  return new GatewayError(
    'NPM_FETCH',
    `npm could not ${what}: ${npmSaid}. Run this again, or install ${request} yourself (npm install --ignore-scripts ${request}) and run ringfence mcp add from that folder.`,
  );
}

/** The exact version a request stands for: itself when exact, else what the registry says now. */
async function resolveVersion(request: NpmRequest, options: FetchOptions): Promise<string> {
  if (EXACT_VERSION.test(request.wanted)) return request.wanted;
  const asked = `${request.name}@${request.wanted}`;
  let stdout: string;
  try {
    ({ stdout } = await run(options.npm ?? 'npm', ['view', asked, 'version', '--json'], {
      env: options.env ?? process.env,
      maxBuffer: 4 * 1024 * 1024,
    }));
  } catch (error) {
    throw npmFailure(error, `resolve ${asked}`, asked);
  }
  const found = stdout.trim() === '' ? undefined : (JSON.parse(stdout) as string | string[]);
  // npm lists every matching version, oldest first; the newest is what `npm install` would take.
  const version = Array.isArray(found) ? found.at(-1) : found;
  if (!version || !EXACT_VERSION.test(version)) {
    throw new GatewayError(
      'NPM_FETCH',
      `No published version of ${request.name} matches "${request.wanted}". See them with: npm view ${request.name} versions`,
    );
  }
  return version;
}

interface LockEntry {
  readonly name?: string;
  readonly hasInstallScript?: boolean;
  readonly dev?: boolean;
}

function installScriptsIn(dir: string): string[] {
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
    packages?: Record<string, LockEntry>;
  };
  return Object.entries(lock.packages ?? {})
    .filter(([key, entry]) => key !== '' && entry.hasInstallScript && !entry.dev)
    .map(([key]) => key.replace(/^.*node_modules\//, ''));
}

/**
 * Fetch an npm package and its dependencies into RINGFENCE_HOME/npm/NAME@VERSION with npm itself
 * (so the registry, proxy and CA npm is configured with apply), install scripts disabled: a
 * package never runs code on this machine at fetch time. npm writes package-lock.json with
 * the integrity of every package; a version already fetched is used as it is, never fetched again.
 */
export async function fetchNpmPackage(request: NpmRequest, options: FetchOptions): Promise<FetchedPackage> {
  const version = await resolveVersion(request, options);
  const spec = { name: request.name, version };
  const root = join(options.home, 'npm');
  const dir = join(root, folderName(spec));
  // The folder appears only by the rename below, once npm finished: its presence means complete.
  if (existsSync(join(dir, 'package-lock.json'))) {
    return { spec, dir, fetched: false, skippedScripts: installScriptsIn(dir) };
  }
  await mkdir(root, { recursive: true, mode: 0o700 });
  const work = join(root, `.fetch-${process.pid}-${Date.now()}`);
  await mkdir(work, { mode: 0o700 });
  try {
    await writeFile(
      join(work, 'package.json'),
      `${JSON.stringify({ private: true, name: 'ringfence-fetch' })}\n`,
    );
    const exact = `${spec.name}@${spec.version}`;
    try {
      await run(
        options.npm ?? 'npm',
        [
          'install',
          exact,
          '--save-exact',
          '--ignore-scripts',
          '--omit=dev',
          '--no-audit',
          '--no-fund',
          '--no-update-notifier',
        ],
        { cwd: work, env: options.env ?? process.env, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      throw npmFailure(error, `fetch ${exact}`, exact);
    }
    await rm(dir, { recursive: true, force: true });
    await rename(work, dir);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return { spec, dir, fetched: true, skippedScripts: installScriptsIn(dir) };
}
