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
  const bundle = loadBundle(fileURLToPath(new URL('../dist/bundle/serve.cjs', import.meta.url)));
  if (!(await bundle.exports.serveMain(process.argv.slice(4), bundle.cache))) await oclif();
} else {
  await oclif();
}
