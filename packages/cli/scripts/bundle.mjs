// Bundles `mcp serve` (dist/serve-main.js, after tsc) into dist/bundle/: one start then reads a
// few files instead of resolving and loading several hundred (docs/performance.md, "Start-up").
// The served path is one CommonJS file, serve.cjs, with a V8 code cache recorded here
// (serve.cjs.cache, see src/lib/code-cache.ts): Node 20 caches no ES module's compiled code. Code
// it reaches only on some starts (the container runtime, the flag parser) is in it too, run only
// when asked for: its source costs a read, not a parse. What it starts as threads or processes is
// bundled beside it, as ES modules, under the names the gateway looks for next to its own module
// (`new URL('./worker.js', import.meta.url)` and the like): the schema worker, the reaper and the
// audit verifier's worker.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const codeCache = new URL('../dist/lib/code-cache.js', import.meta.url);
const { withKeyLine } = await import(codeCache.href);
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
const common = {
  outdir,
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Loaded only where they are used, and never on the serve path: oclif reads a tsconfig with
  // typescript only for uncompiled plugins; ssh2 tries an optional native speed-up; the keyring
  // binding loads its platform's prebuilt .node package (an optional dependency) by name.
  external: ['typescript', 'cpu-features', '*.node', '@napi-rs/keyring'],
  plugins: [unreached, ownCodeIsPure],
  legalComments: 'none',
  logLevel: 'warning',
  metafile: Boolean(process.env.BUNDLE_METAFILE),
};
const threads = await build({
  ...common,
  entryPoints: {
    'reaper-main': beside('@ringfence/gateway/runtime', 'reaper-main.js'),
    'verify-worker': beside('@ringfence/gateway/audit', 'verify-worker.js'),
  },
  entryNames: '[name]',
  // Chunks beside the entries: a chunk's `new URL('./worker.js', import.meta.url)` must find them.
  chunkNames: '[name]-[hash]',
  splitting: true,
  format: 'esm',
  // The CommonJS dependencies (dockerode, ajv, …) call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __ringfenceRequire } from 'node:module'; const require = __ringfenceRequire(import.meta.url);",
  },
});
// What a start waits for, each with a code cache: the served path, and the schema worker (ajv and
// RE2), which must be ready before any tool is listed and loads on the other core meanwhile.
const cached = await build({
  ...common,
  entryPoints: {
    serve: join(root, 'dist', 'serve-main.js'),
    'schema-worker': beside('@ringfence/gateway/schema', 'worker.js'),
  },
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  // The gateway finds its workers and the reaper beside its own module: here, beside serve.cjs.
  define: { 'import.meta.url': '__ringfenceModuleUrl' },
  banner: { js: "var __ringfenceModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
});
if (process.env.BUNDLE_METAFILE)
  writeFileSync(
    process.env.BUNDLE_METAFILE,
    JSON.stringify({ threads: threads.metafile, cached: cached.metafile }),
  );
// The gateway starts its schema worker from `worker.js` beside its module; that is this loader.
writeFileSync(
  join(outdir, 'worker.js'),
  `// The schema worker, run from schema-worker.cjs with its code cache (scripts/bundle.mjs).
import { fileURLToPath } from 'node:url';
import { loadBundle } from '../lib/code-cache.js';
const { cache } = loadBundle(fileURLToPath(new URL('./schema-worker.cjs', import.meta.url)));
if (process.env.RINGFENCE_STARTUP_TRACE === '1')
  process.stderr.write(\`ringfence: start-up \${performance.now().toFixed(1)} ms: schema worker loaded, code cache \${cache}\\n\`);
`,
);

// The key line that binds each bundle to its code and, once recorded, to its cache (code-cache.ts).
for (const name of ['serve.cjs', 'schema-worker.cjs']) {
  writeFileSync(join(outdir, name), withKeyLine(readFileSync(join(outdir, name), 'utf8')));
}

// The caches are recorded by a plain `node`, as bin/run.js is started: V8 refuses a cache made
// under other flags (NODE_OPTIONS is left out for that reason). Each holds the code compiled while
// loading what a start loads: serve-main.ts's warmUp for the served path; for the schema worker,
// its own start in a worker thread (which compiles a first schema).
const record = (script) => {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (run.status !== 0) {
    const how = run.signal ? `signal ${run.signal}` : `exit ${run.status}`;
    throw new Error(
      `recording a code cache in ${outdir} failed (${how}); its own error is above. Run the build again with NODE_OPTIONS unset and enough memory`,
    );
  }
};
const path = (name) => JSON.stringify(join(outdir, name));
record(`import { loadBundle } from ${JSON.stringify(codeCache.href)};
const loaded = loadBundle(${path('serve.cjs')}, { cache: false });
await loaded.exports.warmUp();
loaded.writeCache();`);
record(`import { Worker } from 'node:worker_threads';
const inWorker = ${JSON.stringify(`import { loadBundle } from ${JSON.stringify(codeCache.href)};
loadBundle(${path('schema-worker.cjs')}, { cache: false }).writeCache();
process.exit(0);`)};
const worker = new Worker(new URL('data:text/javascript,' + encodeURIComponent(inWorker)));
const code = await new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject));
if (code !== 0) process.exit(1);`);
