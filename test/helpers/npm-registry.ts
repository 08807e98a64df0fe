import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { dirname, join, parse } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './cli.js';

const run = promisify(execFile);

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

/** Node's lookup of `name` from a package folder: its node_modules, then each parent's. */
function lookup(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === parse(dir).root) return undefined;
  }
}

/** Every package folder `name` needs at run time (and the peers npm would install), as installed here. */
function closureOf(name: string): string[] {
  const start = lookup(name, repoRoot);
  if (!start) throw new Error(`${name} is not installed in this repository`);
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    if (seen.has(dir)) continue;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const peers = Object.keys(pkg.peerDependencies ?? {}).filter(
      (p) => !pkg.peerDependenciesMeta?.[p]?.optional,
    );
    for (const dep of [...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }), ...peers]) {
      const found = lookup(dep, dir);
      if (found) queue.push(found);
    }
  }
  return [...seen];
}

export interface LocalRegistry {
  readonly url: string;
  /** Every path asked for, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

interface Published {
  manifest: Manifest;
  tarball: Buffer;
}

/**
 * An npm registry on loopback serving the packages of `names` exactly as installed in this
 * repository (and `extra` packages made from a folder), so a fetch test never leaves the
 * machine. Tarballs are made here with tar; their integrity is what this registry says it is.
 */
export async function startLocalRegistry(
  names: readonly string[],
  work: string,
  extra: readonly string[] = [],
): Promise<LocalRegistry> {
  const dirs = new Set([...names.flatMap(closureOf), ...extra]);
  const published = new Map<string, Map<string, Published>>();
  let n = 0;
  for (const dir of dirs) {
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest;
    const file = join(work, `pkg-${n++}.tgz`);
    await run('tar', [
      '-czf',
      file,
      '--exclude=./node_modules',
      '--transform',
      's,^\\.,package,',
      '-C',
      dir,
      '.',
    ]);
    const versions = published.get(manifest.name) ?? new Map<string, Published>();
    versions.set(manifest.version, { manifest, tarball: await readFile(file) });
    published.set(manifest.name, versions);
  }
  const requests: string[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    requests.push(path);
    const tarball = /^\/-\/tarballs\/(.+)\/([^/]+)\.tgz$/.exec(path);
    if (tarball) {
      const found = published.get(tarball[1]!)?.get(tarball[2]!);
      if (!found) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(found.tarball);
    }
    const versions = published.get(path.slice(1));
    if (!versions)
      return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    const doc = {
      name: path.slice(1),
      'dist-tags': { latest: [...versions.keys()].at(-1) },
      versions: Object.fromEntries(
        [...versions].map(([version, { manifest, tarball: data }]) => [
          version,
          {
            ...manifest,
            dist: {
              tarball: `${base}/-/tarballs/${manifest.name}/${version}.tgz`,
              integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
              shasum: createHash('sha1').update(data).digest('hex'),
            },
          },
        ]),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: `${base}/`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A package folder with a bin and a postinstall script that would leave `marker` behind if run. */
export async function scriptedPackage(dir: string, marker: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'rf-scripted-server',
      version: '1.0.0',
      bin: { 'rf-scripted-server': 'index.js' },
      scripts: { postinstall: `node -e "require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')"` },
    }),
  );
  await writeFile(join(dir, 'index.js'), '#!/usr/bin/env node\nprocess.stdin.resume();\n');
  return dir;
}
