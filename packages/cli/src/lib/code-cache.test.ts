import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUNDLE_KEY_PREFIX, bundleKey, cacheFileOf, loadBundle, withKeyLine } from './code-cache.js';

/** A bundle as scripts/bundle.mjs writes one: the key line, then CommonJS code. */
const bundleText = withKeyLine;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
/** BUNDLE's key line naming DATA as its cache, as writeCache leaves it. */
function naming(bundle: string, data: Buffer): string {
  const key = bundleKey(bundle)!;
  return `${BUNDLE_KEY_PREFIX}${key.code} ${sha256(data)}${bundle.slice(bundle.indexOf('\n'))}`;
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

  it("names its cache on its first line, keeping the line's length", () => {
    const source = readFileSync(file, 'utf8');
    const key = bundleKey(source)!;
    expect(key.cache).toBe(sha256(readFileSync(cacheFileOf(file))));
    expect(key.code).toBe(sha256(Buffer.from(source.slice(source.indexOf('\n') + 1))));
    expect(source.length).toBe(bundleText(body(1)).length);
  });

  it.each([
    [
      'corrupt',
      (data: Buffer) => Buffer.concat([data.subarray(0, 64), Buffer.alloc(data.length - 64, 0x5a)]),
    ],
    ['truncated', (data: Buffer) => data.subarray(0, Math.floor(data.length / 2))],
    ['empty', () => Buffer.alloc(0)],
    // One bit: V8 checks no digest of its own, and may run what the flipped bit makes, or abort.
    [
      'one bit off',
      (data: Buffer) => {
        const flipped = Buffer.from(data);
        flipped[flipped.length - 9]! ^= 1;
        return flipped;
      },
    ],
  ])('runs the bundle from source, never handing V8 a cache that is %s', (_, damage) => {
    writeFileSync(cacheFileOf(file), damage(readFileSync(cacheFileOf(file))));
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('not the one the bundle names');
    expect((loaded.exports.answer as () => number)()).toBe(1);
  });

  it('runs the bundle from source when V8 refuses a cache the bundle names (another Node, other flags)', () => {
    const refused = Buffer.alloc(4096, 0x5a);
    writeFileSync(cacheFileOf(file), refused);
    writeFileSync(file, naming(readFileSync(file, 'utf8'), refused));
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('rejected by V8');
    expect((loaded.exports.answer as () => number)()).toBe(1);
  });

  it('runs the code on disk, not the cache, when the bundle was edited after its build', () => {
    // The same length, and the key line left as the build wrote it: V8 alone would take the cache.
    const source = readFileSync(file, 'utf8');
    const edited = source.replace('exports.value = 1;', 'exports.value = 7;');
    expect(edited).not.toBe(source);
    writeFileSync(file, edited);
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('bundle changed since its build');
    expect(loaded.exports.value).toBe(7);
  });

  it("never hands V8 another build's cache, which V8 itself would run as this bundle's code", () => {
    // Another build of the same length: V8's own check compares the source's length, not its text.
    const other = bundleText(body(2));
    expect(other.length).toBe(readFileSync(file, 'utf8').length);
    const wrap = (source: string) =>
      `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
    const staleData = readFileSync(cacheFileOf(file));
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
    expect(loaded.cache).toBe('not the one the bundle names');
    expect(loaded.exports.value).toBe(2);
    expect((loaded.exports.answer as () => number)()).toBe(2);
  });

  it('uses no cache for a bundle without a key line', () => {
    const plain = readFileSync(file, 'utf8').split('\n').slice(1).join('\n');
    writeFileSync(file, `${plain}\n`.padStart(plain.length + 1 + 64, ' '));
    const { loaded } = loadFresh();
    expect(loaded.cache).toBe('bundle changed since its build');
    expect((loaded.exports.answer as () => number)()).toBe(1);
    expect(() => loaded.writeCache()).toThrow(/no code cache key/);
  });
});

describe('bundleKey', () => {
  it('reads the two SHA-256 digests from the first line only when it is whole', () => {
    const [code, cache] = ['a'.repeat(64), 'b'.repeat(64)];
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${code} ${cache}\ncode`)).toEqual({ code, cache });
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${code} ${cache}x\ncode`)).toBeUndefined();
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${code}\ncode`)).toBeUndefined();
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${'A'.repeat(64)} ${cache}\ncode`)).toBeUndefined();
    expect(bundleKey(`${BUNDLE_KEY_PREFIX}${code}-${cache}\ncode`)).toBeUndefined();
    expect(bundleKey(`code\n${BUNDLE_KEY_PREFIX}${code} ${cache}\n`)).toBeUndefined();
  });
});
