// Bundles the CLI into one self-contained ESM file for the sidecar image (node built-ins only).
import { chmodSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(root, 'dist', 'bundle', 'ringfence-egress-proxy.mjs');
mkdirSync(dirname(outfile), { recursive: true });
await build({
  entryPoints: [join(root, 'src', 'cli', 'bin.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  legalComments: 'none',
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
process.stderr.write(`bundled ${outfile}\n`);
