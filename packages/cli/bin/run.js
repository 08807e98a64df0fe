#!/usr/bin/env node
// `--version` is answered before @oclif/core is loaded: loading it alone costs several times a
// bare Node start. The line is the one oclif prints (its `config.userAgent`).
if (process.argv[2] === '--version') {
  const { readFileSync } = await import('node:fs');
  const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const arch = process.arch === 'ia32' ? 'x86' : process.arch;
  process.stdout.write(
    `${pjson.name}/${pjson.version} ${process.platform}-${arch} node-${process.version}\n`,
  );
} else {
  // Refusals carry digests, paths and commands meant to be copied: oclif must not wrap them.
  // (The terminal still soft-wraps long lines for reading.)
  process.env.OCLIF_COLUMNS ??= '1000';
  const { execute } = await import('@oclif/core');
  await execute({ dir: import.meta.url });
}
