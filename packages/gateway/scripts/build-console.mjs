#!/usr/bin/env node
// Bundles the console's page (console-web/) into dist/console-web/: one script, one stylesheet,
// one HTML file, all served by `ringfence console` itself (no CDN, works offline).
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'console-web');
const out = join(root, 'dist', 'console-web');
await mkdir(out, { recursive: true });
await build({
  entryPoints: [join(source, 'src', 'main.ts')],
  outfile: join(out, 'console.js'),
  bundle: true,
  format: 'iife',
  target: 'es2022',
  platform: 'browser',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
await copyFile(join(source, 'index.html'), join(out, 'index.html'));
await copyFile(join(source, 'console.css'), join(out, 'console.css'));
