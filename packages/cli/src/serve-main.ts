/**
 * `ringfence mcp serve`, as bin/run.js starts it: this module is bundled with everything it
 * loads (scripts/bundle.mjs → dist/bundle/serve.cjs, run with its V8 code cache by
 * lib/code-cache.ts), so a start reads two files instead of resolving, parsing and compiling
 * several hundred, and @oclif/core's command machinery is not loaded at all.
 * Flags are parsed by oclif's own parser with the command's own definitions (serve-flags.ts),
 * failures are worded by the same functions as the command's, and whatever this path does not
 * take (help, a flag the parser refuses, DEBUG set) is handed back to oclif,
 * which says it exactly as before.
 */
import type { Worker } from 'node:worker_threads';
import { offerEarlyWorker } from '@ringfence/gateway/schema';
import { startupMark } from '@ringfence/gateway/startup';
import { describeFailure } from './lib/failure.js';
import { reportServeFailure, runServe, type ServeFlags } from './lib/serve-run.js';

/** The flags of `mcp serve ARGV`, or undefined when oclif must handle the command line. */
export async function fastServeFlags(argv: readonly string[]): Promise<ServeFlags | undefined> {
  // DEBUG=* asks for oclif's debug output (where a failure happened): that is oclif's to give.
  if (process.env.DEBUG) return undefined;
  // No arguments, nothing to parse (oclif's parser gives no flag either, serve-main.test.ts): the
  // parser and the flag definitions are loaded only when there is something for them.
  if (argv.length === 0) return {};
  const { parseServeFlags } = await import('./lib/serve-flags.js');
  let flags: ServeFlags;
  try {
    ({ flags } = await parseServeFlags(argv));
  } catch (error) {
    // A refused command line (oclif's errors carry `oclif`): oclif says why. Anything else is a
    // fault of this path, and is not to be hidden behind the fallback.
    if (typeof error === 'object' && error !== null && 'oclif' in error) return undefined;
    throw error;
  }
  return flags;
}

/**
 * Runs `mcp serve ARGV` and returns true, or returns false without doing anything. CODE_CACHE is
 * what became of the bundle's code cache (lib/code-cache.ts), for the start-up trace; SCHEMA_WORKER
 * a schema worker bin/run.js started before loading this bundle, for the gateway's pool to take
 * (it checks it as it would its own: @ringfence/gateway's schema/early-worker.ts).
 */
export async function serveMain(
  argv: readonly string[],
  codeCache?: string,
  schemaWorker?: { worker: Worker; url: string },
): Promise<boolean> {
  // Before anything is awaited: what the worker says from now on is kept for the pool.
  if (schemaWorker) offerEarlyWorker(schemaWorker.worker, schemaWorker.url);
  startupMark(`mcp serve: fast path ${import.meta.url}, code cache ${codeCache ?? 'not used'}`);
  const flags = await fastServeFlags(argv);
  if (flags === undefined) {
    // oclif runs the command with its own modules, and its own pool: this worker is not for it.
    await schemaWorker?.worker.terminate();
    return false;
  }
  startupMark('mcp serve: the fast path took the command line');
  try {
    await runServe(flags);
  } catch (error) {
    const failure = describeFailure(error);
    reportServeFailure(failure);
    process.exit(failure.exit);
  }
  return true;
}

/**
 * Loads, without running anything, the modules a start loads after its first steps (the upstream
 * clients, the served endpoint, the flag parser, the container runtime), so that their code is
 * compiled: scripts/bundle.mjs runs this once, then records the bundle's code cache.
 */
export async function warmUp(): Promise<void> {
  await Promise.all([
    import('@ringfence/gateway/upstream'),
    import('@ringfence/gateway/serve'),
    import('@ringfence/gateway/runtime'),
    import('./lib/serve-flags.js'),
  ]);
}
