#!/usr/bin/env node
if (process.env.RINGFENCE_STARTUP_TRACE === '1')
  process.stderr.write(`ringfence: start-up ${performance.now().toFixed(1)} ms: bin/run.js\n`);

/** Every command but the two fast paths below: oclif, with its manifest. */
async function oclif() {
  // Refusals carry digests, paths and commands meant to be copied: oclif must not wrap them.
  // (The terminal still soft-wraps long lines for reading.)
  process.env.OCLIF_COLUMNS ??= '1000';
  const { execute } = await import('@oclif/core');
  await execute({ dir: import.meta.url });
}

if (process.argv[2] === '--version') {
  // Answered before @oclif/core is loaded: loading it alone costs several times a bare Node
  // start. The line is the one oclif prints (its `config.userAgent`).
  const { readFileSync } = await import('node:fs');
  const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const arch = process.arch === 'ia32' ? 'x86' : process.arch;
  process.stdout.write(
    `${pjson.name}/${pjson.version} ${process.platform}-${arch} node-${process.version}\n`,
  );
} else if (process.argv[2] === 'mcp' && process.argv[3] === 'serve') {
  // What an AI client starts, and waits for: one bundle with its code cache (scripts/bundle.mjs,
  // src/lib/code-cache.ts), same flags, same messages; it hands back to oclif what it does not
  // take (help, a refused flag).
  const { loadBundle } = await import('../dist/lib/code-cache.js');
  const { fileURLToPath } = await import('node:url');
  const { Worker } = await import('node:worker_threads');
  // No tool is listed before its schema is compiled in a schema worker, which takes longer to
  // start than loading the bundle: started now, it loads on the other core meanwhile. The pool
  // takes it only with its own file and limits (the pool's SCHEMA_WORKER_LIMITS, in
  // schema/early-worker.ts; serve-main.test.ts holds the two together), else stops it and starts
  // its own.
  const url = new URL('../dist/bundle/worker.js', import.meta.url);
  let schemaWorker;
  try {
    const worker = new Worker(url, {
      resourceLimits: { maxOldGenerationSizeMb: 256, stackSizeMb: 4 },
      stdout: false,
      stderr: false,
    });
    schemaWorker = { worker, url: url.href };
  } catch {}
  // Synchronous up to serveMain's first step, which listens to the worker: nothing it says is lost.
  const bundle = loadBundle(fileURLToPath(new URL('../dist/bundle/serve.cjs', import.meta.url)));
  if (!(await bundle.exports.serveMain(process.argv.slice(4), bundle.cache, schemaWorker))) await oclif();
} else {
  await oclif();
}
