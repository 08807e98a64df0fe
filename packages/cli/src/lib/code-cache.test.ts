import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUNDLE_KEY_PREFIX, bundleKey, cacheFileOf, loadBundle } from './code-cache.js';

/** A bundle as scripts/bundle.mjs writes one: the key line, then CommonJS code. */
function bundleText(body: string): string {
  return `${BUNDLE_KEY_PREFIX}${createHash('sha256').update(body).digest('hex')}\n${body}`;
}

// Enough code that V8 has functions to cache; `answer` and `value` tell which build ran.
const body = (answer: number) => `
exports.value = ${answer};
const parts = [];
for (let i = 0; i < 50; i++) parts.push((x) => x * ${answer} + i);
exports.answer = () => ${answer};
exports.sum = () => parts.reduce((total, f) => total + f(1), 0);
exports.filename = __filename;
exports.builtin = typeof require('node:path').join;
`;

describe('loadBundle', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rf-code-cache-'));
    file = join(dir, 'serve.cjs');
    writeFileSync(file, bundleText(body(1)));
    const recorded = loadBundle(file, { cache: false });
    expect(recorded.cache).toBe('not used');
    (recorded.exports.sum as () => number)();
    recorded.writeCache();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * The bundle and its cache loaded from a path not loaded before: V8 keeps what it compiled in
   * this process by source and file name, and would take that instead of reading the cache.
   */
  let loads = 0;
  function loadFresh() {
    const fresh = join(dir, `load-${loads++}.cjs`);
    copyFileSync(file, fresh);
    if (existsSync(cacheFileOf(file))) copyFileSync(cacheFileOf(file), cacheFileOf(fresh));
    return { loaded: loadBundle(fresh), fresh };
  }

  it('runs the bundle with the cache the build recorded, as Node runs CommonJS', () => {
    const { loaded, fresh } = loadFresh();
    expect(loaded.cache).toBe('accepted');
    expect((loaded.exports.answer as () => number)()).toBe(1);
    expect((loaded.exports.sum as () => number)()).toBe(50 + (49 * 50) / 2);
    expect(loaded.exports.filename).toBe(fresh);
    expect(loaded.exports.builtin).toBe('function');
  });

  it('compiles from source when there is no cache', () => {
    rmSync(cacheFileOf(file));
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('absent');
    expect((loaded.exports.answer as () => number)()).toBe(1);
  });

  it.each([
    [
      'corrupt',
      (data: Buffer) => Buffer.concat([data.subarray(0, 64), Buffer.alloc(data.length - 64, 0x5a)]),
    ],
    ['truncated', (data: Buffer) => data.subarray(0, 64 + Math.floor((data.length - 64) / 2))],
    ['empty after its key', (data: Buffer) => data.subarray(0, 64)],
  ])('runs the bundle correctly from source when the cache is %s (V8 rejects it)', (_, damage) => {
    writeFileSync(cacheFileOf(file), damage(readFileSync(cacheFileOf(file))));
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('rejected by V8');
    expect((loaded.exports.answer as () => number)()).toBe(1);
  });

  it("never hands V8 another build's cache, which V8 itself would run as this bundle's code", () => {
    // Another build of the same length: V8's own check compares the source's length, not its text.
    const other = bundleText(body(2));
    expect(other.length).toBe(readFileSync(file, 'utf8').length);
    const wrap = (source: string) =>
      `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
    const staleData = readFileSync(cacheFileOf(file)).subarray(64);
    const unguarded = new Script(wrap(other), {
      filename: join(dir, 'unguarded.cjs'),
      cachedData: staleData,
    });
    const unguardedExports: Record<string, unknown> = {};
    (unguarded.runInThisContext() as (...args: unknown[]) => void)(
      unguardedExports,
      createRequire(file),
      { exports: unguardedExports },
      file,
      dir,
    );
    // What the key prevents: V8 took the old build's code for the new build's source.
    expect(unguarded.cachedDataRejected).toBe(false);
    expect(unguardedExports.value).toBe(1);

    writeFileSync(file, other);
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('of another build');
    expect(loaded.exports.value).toBe(2);
    expect((loaded.exports.answer as () => number)()).toBe(2);
  });

  it('uses no cache for a bundle without a key line', () => {
    const plain = readFileSync(file, 'utf8').split('\n').slice(1).join('\n');
    writeFileSync(file, `${plain}\n`.padStart(plain.length + 1 + 64, ' '));
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('of another build');
    expect((loaded.exports.answer as () => number)()).toBe(1);
    expect(() => loaded.writeCache()).toThrow(/no code cache key/);
  });
});

describe('bundleKey', () => {
  it('reads a SHA-256 key from the first line only when it is whole', () => {
    const key = 'a'.repeat(64);
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${key}\ncode`)).toBe(key);
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${key}x\ncode`)).toBeUndefined();
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${'A'.repeat(64)}\ncode`)).toBeUndefined();
    expect(bundleKey(`code\n${BUNDLE_KEY_PREFIX}${key}\n`)).toBeUndefined();
  });
});
