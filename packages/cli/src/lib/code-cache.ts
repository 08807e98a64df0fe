/**
 * `mcp serve`'s bundle run with a V8 code cache (docs/performance.md, "Start-up"). Node 20 has no
 * compile cache for ES modules (`module.enableCompileCache` is Node 22's), so the bundle is
 * CommonJS, compiled here through `vm.Script` with the `cachedData` that `scripts/bundle.mjs`
 * recorded at build time: V8 then skips parsing the bundle and compiling the functions a start
 * runs (the SDK's zod schemas above all), which was most of the start's own CPU.
 *
 * A code cache is code: V8 checks that it was made by this V8 with these flags for a source of
 * this length, and nothing else. So it is read only from beside the bundle (the package's dist/,
 * written by the build alone, never the user's home or the current directory), and only when its
 * header carries the key on the bundle's first line, a SHA-256 of the bundle the build wrote with
 * it: a cache from another build is never handed to V8. Whatever is wrong with it (absent, from
 * another build, truncated, corrupt, from another Node), the bundle is compiled as plain source.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { constants, Script } from 'node:vm';

/** The bundle's first line: this prefix, then the SHA-256 (hex) of everything after that line. */
export const BUNDLE_KEY_PREFIX = '// ringfence code cache key ';
const KEY_LENGTH = 64;

/** What became of the cache on this load; `accepted` is the only state in which V8 used it. */
export type CodeCacheState = 'accepted' | 'rejected by V8' | 'absent' | 'of another build' | 'not used';

export interface LoadedBundle {
  readonly exports: Record<string, unknown>;
  readonly cache: CodeCacheState;
  /** Records the functions compiled so far as the bundle's cache (the build's step, not a start's). */
  writeCache(): void;
}

/** The cache file of a bundle: beside it, in the installation's own dist/. */
export const cacheFileOf = (bundle: string): string => `${bundle}.cache`;

/** The key on a bundle's first line, or undefined when it has none. */
export function bundleKey(source: string): string | undefined {
  if (!source.startsWith(BUNDLE_KEY_PREFIX)) return undefined;
  const key = source.slice(BUNDLE_KEY_PREFIX.length, BUNDLE_KEY_PREFIX.length + KEY_LENGTH);
  return /^[0-9a-f]{64}$/.test(key) && source[BUNDLE_KEY_PREFIX.length + KEY_LENGTH] === '\n'
    ? key
    : undefined;
}

/** The cached data for KEY from FILE: what follows the key, when the file starts with it. */
function readCache(file: string, key: string | undefined): Buffer | CodeCacheState {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return 'absent';
  }
  if (key === undefined || data.subarray(0, KEY_LENGTH).toString('latin1') !== key) return 'of another build';
  return data.subarray(KEY_LENGTH);
}

/**
 * Runs the CommonJS bundle FILE, with its code cache unless `cache` is false, and returns its
 * exports. The wrapper is Node's own CommonJS one: the bundle sees the same `require`, `module`,
 * `__filename` and `__dirname` it would when loaded by `require`.
 */
export function loadBundle(file: string, options: { cache?: boolean } = {}): LoadedBundle {
  const source = readFileSync(file, 'utf8');
  const key = bundleKey(source);
  const found = options.cache === false ? 'not used' : readCache(cacheFileOf(file), key);
  const cachedData = typeof found === 'string' ? undefined : found;
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    // The bundle has no import() of its own (esbuild turns them into requires); should a
    // dependency's reach it, it resolves as it would in any module of the main context.
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const cache: CodeCacheState =
    typeof found === 'string' ? found : script.cachedDataRejected ? 'rejected by V8' : 'accepted';
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return {
    exports: module.exports,
    cache,
    writeCache() {
      if (key === undefined) throw new Error(`${file} carries no code cache key on its first line`);
      writeFileSync(
        cacheFileOf(file),
        Buffer.concat([Buffer.from(key, 'latin1'), script.createCachedData()]),
      );
    },
  };
}
