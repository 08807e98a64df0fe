// Bundles `mcp serve` (dist/serve-main.js, after tsc) into dist/bundle/: one start then reads a
// few files instead of resolving and loading several hundred (docs/performance.md, "Start-up").
// What the served path starts as threads or processes is bundled beside it under the names the
// gateway looks for next to its own module (`new URL('./worker.js', import.meta.url)` and the
// like): the schema worker, the reaper and the audit verifier's worker. Code loaded only on some
// starts (the container runtime, the upstream clients, the served endpoint) stays in chunks of its
// own, loaded when `runServe` asks for it.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'bundle');
const beside = (subpath, file) => join(dirname(fileURLToPath(import.meta.resolve(subpath))), file);

/**
 * Two parts of dockerode that ringfence never reaches, left out of the bundle: BuildKit sessions
 * (gRPC, for `buildImage` with version 2; ringfence builds only with the classic builder, and not
 * from `mcp serve`) and SSH engines (`resolveEngineEndpoint` accepts unix:// and tcp:// only).
 * Loading them was most of the container runtime's start (gRPC, protobuf, ssh2 with its
 * emscripten crypto); should one ever be reached, it fails saying why.
 */
const unreached = {
  name: 'unreached-dockerode-parts',
  setup(b) {
    b.onResolve({ filter: /^\.\/(session|ssh)$/ }, (args) =>
      /[/\\](dockerode|docker-modem)[/\\]lib$/.test(args.resolveDir)
        ? { path: args.path, namespace: 'unreached' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'unreached' }, (args) => ({
      contents: `module.exports = function unreached() { throw new Error(${JSON.stringify(
        `ringfence: the bundled mcp serve leaves out dockerode's ${args.path === './ssh' ? 'SSH engine connections' : 'BuildKit sessions'}, which it never uses; this is a bug, please report it.`,
      )}); };`,
      loader: 'js',
    }));
  },
};

/**
 * The workspace's own packages have no import-time effects: a module none of whose exports is used
 * is left out, as `"sideEffects": false` would say. Their index files re-export whole areas, and
 * without this the policy's authoring code (and the yaml parser with it) came along on every start.
 */
const OWN = /[/\\]packages[/\\](gateway|policy)[/\\]dist[/\\]/;
// That holds while no module of theirs is imported for its effect alone (`import './x.js'`), which
// this would silently drop: refuse to bundle if one appears.
for (const pkg of ['@ringfence/gateway/config', '@ringfence/policy']) {
  const dist = fileURLToPath(new URL('.', import.meta.resolve(pkg))).replace(/(dist[/\\]).*$/, '$1');
  for (const file of readdirSync(dist, { recursive: true })) {
    if (!String(file).endsWith('.js')) continue;
    if (
      /^\s*import\s*['"]/m.test(readFileSync(join(dist, String(file)), 'utf8')) &&
      !/worker|main/.test(String(file))
    )
      throw new Error(
        `${join(dist, String(file))} imports a module for its effect alone; own-code-is-pure would drop it`,
      );
  }
}
const ownCodeIsPure = {
  name: 'own-code-is-pure',
  setup(b) {
    b.onResolve({ filter: /^(@ringfence\/|\.)/ }, async (args) => {
      if (args.pluginData === ownCodeIsPure || args.kind === 'entry-point') return undefined;
      if (!args.path.startsWith('@ringfence/') && !OWN.test(`${args.resolveDir}/`)) return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: ownCodeIsPure,
      });
      if (resolved.errors.length > 0 || !OWN.test(resolved.path))
        return resolved.errors.length ? resolved : undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: {
    serve: join(root, 'dist', 'serve-main.js'),
    worker: beside('@ringfence/gateway/schema', 'worker.js'),
    'reaper-main': beside('@ringfence/gateway/runtime', 'reaper-main.js'),
    'verify-worker': beside('@ringfence/gateway/audit', 'verify-worker.js'),
  },
  outdir,
  entryNames: '[name]',
  // Chunks beside the entries: a chunk's `new URL('./worker.js', import.meta.url)` must find them.
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Loaded only where they are used, and never on the serve path: oclif reads a tsconfig with
  // typescript only for uncompiled plugins; ssh2 tries an optional native speed-up.
  external: ['typescript', 'cpu-features', '*.node'],
  // The CommonJS dependencies (dockerode, ajv, …) call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __ringfenceRequire } from 'node:module'; const require = __ringfenceRequire(import.meta.url);",
  },
  plugins: [unreached, ownCodeIsPure],
  legalComments: 'none',
  logLevel: 'warning',
  metafile: Boolean(process.env.BUNDLE_METAFILE),
});
if (process.env.BUNDLE_METAFILE) writeFileSync(process.env.BUNDLE_METAFILE, JSON.stringify(result.metafile));
