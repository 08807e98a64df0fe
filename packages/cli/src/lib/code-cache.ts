/**
 * `mcp serve`'s bundle run with a V8 code cache (docs/performance.md, "Start-up"). Node 20 has no
 * compile cache for ES modules (`module.enableCompileCache` is Node 22's), so the bundle is
 * CommonJS, compiled here through `vm.Script` with the `cachedData` that `scripts/bundle.mjs`
 * recorded at build time: V8 then skips parsing the bundle and compiling the functions a start
 * runs (the SDK's zod schemas above all), which was most of the start's own CPU.
 *
 * A code cache is code: V8 checks that it was made by this V8 with these flags for a source of
 * this length, and nothing else, and it does not check the cache's own bytes (a flipped bit can
 * make V8 run other code or abort). So the bundle's first line, written by the build, carries two
 * SHA-256 digests: of the bundle's code after that line, and of the cache recorded for it. The
 * cache is used only when both match, so the code that runs is the code the bundle on disk says,
 * and the bundle names its cache (whoever checks serve.cjs checks what it runs). It is read only
 * from beside the bundle (the package's dist/, written by the build alone, never the user's home
 * or the current directory). Whatever is wrong (absent, another build's, truncated, corrupt, the
 * bundle edited since, another Node), the bundle is compiled as plain source: slower, not wrong.
 * Checking both digests costs about 5 ms of a start.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { constants, Script } from 'node:vm';

/** The bundle's first line: this prefix, the SHA-256 of the code after it, a space, the cache's. */
export const BUNDLE_KEY_PREFIX = '// ringfence code cache key ';
const DIGEST = /^[0-9a-f]{64}$/;
/** The cache digest a freshly written bundle carries until the build records its cache. */
const NO_CACHE = '0'.repeat(64);
const LINE_LENGTH = BUNDLE_KEY_PREFIX.length + 64 + 1 + 64;

/** What became of the cache on this load; `accepted` is the only state in which V8 used it. */
export type CodeCacheState =
  | 'accepted'
  | 'rejected by V8'
  | 'absent'
  | 'not the one the bundle names'
  | 'bundle changed since its build'
  | 'not used';

export interface LoadedBundle {
  readonly exports: Record<string, unknown>;
  readonly cache: CodeCacheState;
  /**
   * Records the functions compiled so far as the bundle's cache and writes its digest into the
   * bundle's first line (the build's step, not a start's; the line keeps its length, which is all
   * of the source V8 compares).
   */
  writeCache(): void;
}

/** The cache file of a bundle: beside it, in the installation's own dist/. */
export const cacheFileOf = (bundle: string): string => `${bundle}.cache`;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** CODE with the key line the build puts first: its digest, and no cache recorded yet. */
export function withKeyLine(code: string): string {
  return `${BUNDLE_KEY_PREFIX}${sha256(code)} ${NO_CACHE}\n${code}`;
}

/** The digests on a bundle's first line, or undefined when it has no whole key line. */
export function bundleKey(source: string): { code: string; cache: string } | undefined {
  if (!source.startsWith(BUNDLE_KEY_PREFIX) || source[LINE_LENGTH] !== '\n') return undefined;
  const code = source.slice(BUNDLE_KEY_PREFIX.length, BUNDLE_KEY_PREFIX.length + 64);
  const cache = source.slice(BUNDLE_KEY_PREFIX.length + 65, LINE_LENGTH);
  const separated = source[BUNDLE_KEY_PREFIX.length + 64] === ' ';
  return separated && DIGEST.test(code) && DIGEST.test(cache) ? { code, cache } : undefined;
}

/** What the cache check decides: the cached data to hand V8, or why there is none. */
function findCache(file: string, source: string): Buffer | CodeCacheState {
  const key = bundleKey(source);
  if (key === undefined || sha256(source.slice(LINE_LENGTH + 1)) !== key.code) {
    return 'bundle changed since its build';
  }
  let data: Buffer;
  try {
    data = readFileSync(cacheFileOf(file));
  } catch {
    return 'absent';
  }
  return key.cache !== NO_CACHE && sha256(data) === key.cache ? data : 'not the one the bundle names';
}

/**
 * Runs the CommonJS bundle FILE, with its code cache unless `cache` is false, and returns its
 * exports. The wrapper is Node's own CommonJS one: the bundle sees the same `require`, `module`,
 * `__filename` and `__dirname` it would when loaded by `require`.
 */
export function loadBundle(file: string, options: { cache?: boolean } = {}): LoadedBundle {
  const source = readFileSync(file, 'utf8');
  const found = options.cache === false ? 'not used' : findCache(file, source);
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
      const key = bundleKey(source);
      if (key === undefined) {
        throw new Error(
          `${file} carries no code cache key on its first line; build it with scripts/bundle.mjs (npm run build -w @ringfence/cli), which writes one`,
        );
      }
      const data = script.createCachedData();
      writeFileSync(cacheFileOf(file), data);
      const line = `${BUNDLE_KEY_PREFIX}${key.code} ${sha256(data)}`;
      writeFileSync(file, `${line}${source.slice(LINE_LENGTH)}`);
    },
  };
}
