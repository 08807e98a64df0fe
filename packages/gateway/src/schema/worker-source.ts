/**
 * Where the validation worker's code lives. Built output has `worker.js` beside this module.
 * When this module runs from TypeScript source (vitest), there is only `worker.ts`, which a plain
 * worker thread cannot load: the worker is then started through a tiny loader hook that maps
 * `./x.js` imports to `./x.ts` and strips types with the TypeScript compiler. That path is for
 * development only; the published package always takes the first branch.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface WorkerSource {
  url: URL | string;
  options: { eval?: boolean };
}

const cached = new Map<string, WorkerSource>();

export function workerSource(): WorkerSource {
  return workerSourceAt(new URL('./worker.js', import.meta.url));
}

/** The same for any worker module, named by its built `.js` URL (the audit verifier's too). */
export function workerSourceAt(built: URL): WorkerSource {
  let found = cached.get(built.href);
  if (found !== undefined) return found;
  if (built.protocol === 'file:' && existsSync(fileURLToPath(built))) {
    found = { url: built, options: {} };
  } else {
    const source = new URL(built.href.replace(/\.js$/, '.ts'));
    found = { url: bootstrap(source), options: { eval: true } };
  }
  cached.set(built.href, found);
  return found;
}

function bootstrap(source: URL): string {
  const hooks = `
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const base = ${JSON.stringify(fileURLToPath(source))};
let ts;
export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  if (parent && parent.startsWith('file:') && parent.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const asJs = new URL(specifier, parent);
    const asTs = new URL(specifier.slice(0, -3) + '.ts', parent);
    if (!existsSync(fileURLToPath(asJs)) && existsSync(fileURLToPath(asTs))) return { url: asTs.href, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  ts ??= createRequire(base)('typescript');
  const file = fileURLToPath(url);
  const out = ts.transpileModule(readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}`;
  return `
const { register } = require('node:module');
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));
import(${JSON.stringify(source.href)}).catch((error) => { throw error; });
`;
}
