import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, parse, relative, sep } from 'node:path';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { type BuiltImage, buildContextImage } from './build.js';
import type { ContextFile, ImageContext } from './context.js';

export const NPM_SERVER_LABEL = 'npm-server';

export interface NpmSpec {
  readonly name: string;
  readonly version: string;
}

/** `name@version` or `@scope/name@version`; the version is required and exact. */
export function parseNpmSpec(spec: string): NpmSpec {
  const match = /^((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*)@(\d+\.\d+\.\d+(?:[-+][\w.+-]*)?)$/i.exec(
    spec.trim(),
  );
  if (!match) {
    throw new GatewayError(
      'IMAGE_CONTEXT',
      `"${spec}" is not PACKAGE@VERSION with an exact version (e.g. @modelcontextprotocol/server-memory@2026.8.31).`,
    );
  }
  return { name: match[1]!, version: match[2]! };
}

interface PackageJson {
  name?: string;
  version?: string;
  bin?: string | Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

/** Node's lookup: `dir/node_modules/name`, then each parent's, up to and including `root`. */
export function resolvePackageDir(name: string, from: string, root: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    try {
      if (statSync(join(candidate, 'package.json')).isFile()) return candidate;
    } catch {
      /* keep looking */
    }
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

export interface InstalledPackage {
  readonly root: string;
  readonly dir: string;
  readonly bin: string;
  /** Every package directory of the runtime closure, the server's own first. */
  readonly closure: readonly string[];
  /** Lockfile entries of the closure (`node_modules/...` → version, integrity, resolved). */
  readonly lock: Record<string, { version?: string; integrity?: string; resolved?: string }>;
}

/**
 * Find an installed npm package and its runtime dependency closure on this machine, starting the
 * lookup at `from`. The exact version must be installed; the lockfile's entries for the closure
 * are kept (their versions must match what is installed), so the image says what it contains.
 */
export function findInstalledPackage(spec: NpmSpec, from: string): InstalledPackage {
  const dir = resolvePackageDir(spec.name, from, parse(from).root);
  const install = `Install it on this machine first (npm install ${spec.name}@${spec.version}), then run this again.`;
  if (!dir)
    throw new GatewayError('IMAGE_CONTEXT', `${spec.name} is not installed under ${from}. ${install}`);
  const manifest = readJson(join(dir, 'package.json'));
  if (manifest.version !== spec.version) {
    throw new GatewayError(
      'IMAGE_CONTEXT',
      `${spec.name} ${manifest.version} is installed, not ${spec.version}. ${install}`,
    );
  }
  const root = dirname(dir.slice(0, dir.lastIndexOf(`${sep}node_modules${sep}`) + 1 + 'node_modules'.length));
  const bins = typeof manifest.bin === 'string' ? { [spec.name]: manifest.bin } : (manifest.bin ?? {});
  const unscoped = spec.name.split('/').pop()!;
  const binEntries = Object.entries(bins);
  const bin = bins[unscoped] ?? bins[spec.name] ?? (binEntries.length === 1 ? binEntries[0]![1] : undefined);
  if (!bin)
    throw new GatewayError(
      'IMAGE_CONTEXT',
      `${spec.name} declares no single command (package.json "bin"); it cannot be run as a server.`,
    );

  const realNodeModules = realpathSync(join(root, 'node_modules'));
  const closure: string[] = [];
  const queue = [dir];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const current = queue.shift()!;
    if (seen.has(current)) continue;
    seen.add(current);
    closure.push(current);
    const pkg = readJson(join(current, 'package.json'));
    const deps = { ...pkg.dependencies, ...pkg.optionalDependencies };
    for (const dep of Object.keys(deps)) {
      // A dependency name is a path below node_modules: only npm's name syntax may become one.
      if (!NPM_NAME.test(dep)) {
        throw new GatewayError(
          'IMAGE_CONTEXT',
          `${pkg.name} depends on "${dep}", which is not a valid npm package name; refusing to build.`,
        );
      }
      const found = resolvePackageDir(dep, current, root);
      if (found && !isInside(realpathSync(found), realNodeModules)) {
        throw new GatewayError(
          'IMAGE_CONTEXT',
          `${dep} (needed by ${pkg.name}) resolves outside ${realNodeModules}; refusing to build.`,
        );
      }
      if (found) queue.push(found);
      else if (!(pkg.optionalDependencies && dep in pkg.optionalDependencies)) {
        throw new GatewayError(
          'IMAGE_CONTEXT',
          `${dep} (needed by ${pkg.name}) is not installed under ${root}. Run npm install there and try again.`,
        );
      }
    }
  }

  const lock: InstalledPackage['lock'] = {};
  let lockfile:
    | { packages?: Record<string, { version?: string; integrity?: string; resolved?: string }> }
    | undefined;
  for (const candidate of [
    join(root, 'package-lock.json'),
    join(root, 'node_modules', '.package-lock.json'),
  ]) {
    try {
      lockfile = JSON.parse(readFileSync(candidate, 'utf8'));
      break;
    } catch {
      /* try the next */
    }
  }
  for (const pkgDir of closure) {
    const key = relative(root, pkgDir).split(sep).join('/');
    const entry = lockfile?.packages?.[key];
    const installed = readJson(join(pkgDir, 'package.json')).version;
    if (entry && entry.version !== undefined && entry.version !== installed) {
      throw new GatewayError(
        'IMAGE_CONTEXT',
        `${key} is ${installed} on disk but ${entry.version} in the lockfile; run npm ci in ${root} first.`,
      );
    }
    lock[key] = entry
      ? { version: entry.version, integrity: entry.integrity, resolved: entry.resolved }
      : { version: installed };
  }
  return { root, dir, bin, closure, lock };
}

const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;

const isInside = (path: string, dir: string) =>
  path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * Copy a package's files. A link is followed only if it lands inside the package itself: a
 * package may not pull host files (a key, a .env) into the image through a symlink.
 */
function addTree(
  files: ContextFile[],
  source: string,
  target: string,
  packageRoot: string = realpathSync(source),
): void {
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    // Nested node_modules are packages of their own, copied only if they are in the closure.
    if (entry.name === 'node_modules') continue;
    const from = join(source, entry.name);
    const to = `${target}/${entry.name}`;
    if (entry.isDirectory()) addTree(files, from, to, packageRoot);
    else if (entry.isFile() || entry.isSymbolicLink()) {
      let real: string;
      try {
        real = realpathSync(from);
        if (!statSync(real).isFile()) continue;
      } catch {
        continue;
      }
      if (!isInside(real, packageRoot)) {
        throw new GatewayError(
          'IMAGE_CONTEXT',
          `${from} is a link to ${real}, outside its package; refusing to copy host files into a server image.`,
        );
      }
      const mode = statSync(real).mode & 0o111 ? 0o755 : 0o644;
      files.push({ path: to, mode, source: { hostPath: real } });
    }
  }
}

/** The context of a server image: the package closure under /app on the Node base image. */
export function planNpmServerContext(
  spec: NpmSpec,
  installed: InstalledPackage,
  baseRef: string,
): ImageContext {
  const files: ContextFile[] = [];
  for (const pkgDir of installed.closure) {
    const rel = relative(installed.root, pkgDir).split(sep).join('/');
    addTree(files, realpathSync(pkgDir), `app/${rel}`);
  }
  files.push({
    path: 'app/ringfence-lock.json',
    mode: 0o644,
    source: {
      content: Buffer.from(`${JSON.stringify({ package: spec, packages: installed.lock }, null, 2)}\n`),
    },
  });
  const entry = `/app/node_modules/${spec.name}/${installed.bin.replace(/^\.\//, '')}`;
  return {
    dockerfile: [
      `FROM ${baseRef}`,
      'COPY app/ /app/',
      'USER 65532:65532',
      'WORKDIR /tmp',
      `LABEL ringfence.npm-package="${spec.name}@${spec.version}"`,
      `ENTRYPOINT ${JSON.stringify(['node', entry])}`,
      '',
    ].join('\n'),
    files,
  };
}

export function npmImageRepository(name: string): string {
  return `ringfence/mcp-${name
    .replace(/^@/, '')
    .replace(/[^a-z0-9._-]+/gi, '-')
    .toLowerCase()}`;
}

/** The version of `name` that Node's lookup from `from` finds, if any. */
export function installedVersion(name: string, from: string): string | undefined {
  const dir = resolvePackageDir(name, from, parse(from).root);
  return dir ? readJson(join(dir, 'package.json')).version : undefined;
}

export async function buildNpmServerImage(
  docker: Docker,
  options: { spec: NpmSpec; from: string; baseRef: string; onProgress?: (line: string) => void },
): Promise<BuiltImage> {
  const installed = findInstalledPackage(options.spec, options.from);
  return buildContextImage(docker, {
    repository: npmImageRepository(options.spec.name),
    tagPrefix: options.spec.version.replace(/[^\w.-]/g, '-'),
    context: planNpmServerContext(options.spec, installed, options.baseRef),
    labels: { 'ringfence.image': NPM_SERVER_LABEL },
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}
