// Compiles the package once into a scratch folder so tests can start real Node processes
// against the current sources (child processes cannot load TypeScript directly).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let built: string | undefined;

/** Path to the compiled `index.js` of this package, built on first use. */
export async function buildForChildProcesses(): Promise<string> {
  if (built) return built;
  // Inside node_modules so that the compiled code resolves tweetnacl, ajv and yaml normally.
  const cacheRoot = join(packageDir, 'node_modules', '.cache');
  await mkdir(cacheRoot, { recursive: true });
  const outDir = mkdtempSync(join(cacheRoot, 'ringfence-policy-test-'));
  const tsc = join(packageDir, '../../node_modules/typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [
      tsc,
      '-p',
      join(packageDir, 'tsconfig.build.json'),
      '--outDir',
      outDir,
      '--declaration',
      'false',
      '--declarationMap',
      'false',
      '--sourceMap',
      'false',
    ],
    { stdio: 'inherit' },
  );
  built = join(outDir, 'index.js');
  return built;
}

/** Removes the scratch build. */
export async function removeChildProcessBuild(): Promise<void> {
  if (built) await rm(dirname(built), { recursive: true, force: true });
  built = undefined;
}
