import nacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import { testKey } from '../testing/fixtures.js';
import { checkPublicKey, GROUP_ORDER, hasCanonicalScalar, signDetached, verifyStrict } from './ed25519.js';

const P = 2n ** 255n - 19n;

function encodeY(y: bigint, sign = 0): Uint8Array {
  const out = new Uint8Array(32);
  let n = y;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  out[31] = out[31]! | (sign << 7);
  return out;
}

function addToScalar(signature: Uint8Array, delta: bigint): Uint8Array {
  const out = Uint8Array.from(signature);
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(out[i]!);
  s += delta;
  for (let i = 32; i < 64; i++) {
    out[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return out;
}

// The y-coordinates of the eight small-order points of edwards25519 (identity, order 2, the
// two of order 4 share y = 0, and the four of order 8 share two y values), computed from the
// curve equation rather than copied.
const ORDER_8_Y = 2707385501144840649318225287225658788936804267575313519463743609750303402022n;
const SMALL_ORDER_ENCODINGS: [string, Uint8Array][] = [
  ['identity (y=1)', encodeY(1n)],
  ['order 2 (y=-1)', encodeY(P - 1n)],
  ['order 4 (y=0, +x)', encodeY(0n)],
  ['order 4 (y=0, -x)', encodeY(0n, 1)],
  ['order 8 (+x)', encodeY(ORDER_8_Y)],
  ['order 8 (-x)', encodeY(ORDER_8_Y, 1)],
  ['order 8 (other y, +x)', encodeY(P - ORDER_8_Y)],
  ['order 8 (other y, -x)', encodeY(P - ORDER_8_Y, 1)],
];

describe('Ed25519 strict checks', () => {
  it('accepts a normal key and signature', () => {
    const pair = testKey(1);
    const message = new TextEncoder().encode('hello');
    expect(checkPublicKey(pair.publicKey)).toBeUndefined();
    expect(verifyStrict(message, signDetached(message, pair), pair.publicKey)).toBe(true);
  });

  it.each(SMALL_ORDER_ENCODINGS)('refuses the small-order key %s', (_name, key) => {
    expect(checkPublicKey(key)).toBe('small-order');
  });

  it('refuses non-canonical encodings (y ≥ p) and points off the curve', () => {
    expect(checkPublicKey(encodeY(P + 1n))).toBe('not-canonical');
    expect(checkPublicKey(encodeY(1n, 1))).toBe('not-canonical'); // x = 0 with the sign bit set
    expect(checkPublicKey(encodeY(2n))).toBe('not-on-curve');
    expect(checkPublicKey(new Uint8Array(31))).toBe('wrong-length');
  });

  it('a small-order key lets a forged signature verify in tweetnacl, but not in verifyStrict', () => {
    // A = identity, R = identity, S = 0: [S]B == R + [h]A holds for every message.
    const key = encodeY(1n);
    const forged = new Uint8Array(64);
    forged.set(encodeY(1n), 0);
    const message = new TextEncoder().encode('any message at all');
    expect(nacl.sign.detached.verify(message, forged, key)).toBe(true);
    expect(verifyStrict(message, forged, key)).toBe(false);
  });

  it('a malleated signature (S + L) verifies in tweetnacl, but not in verifyStrict', () => {
    const pair = testKey(3);
    const message = new TextEncoder().encode('policy bytes');
    const good = signDetached(message, pair);
    const malleated = addToScalar(good, GROUP_ORDER);
    expect(hasCanonicalScalar(good)).toBe(true);
    expect(hasCanonicalScalar(malleated)).toBe(false);
    expect(nacl.sign.detached.verify(message, malleated, pair.publicKey)).toBe(true);
    expect(verifyStrict(message, malleated, pair.publicKey)).toBe(false);
  });

  it('refuses wrong lengths without throwing', () => {
    const pair = testKey(4);
    const message = new Uint8Array([1]);
    const sig = signDetached(message, pair);
    expect(verifyStrict(message, sig.subarray(0, 63), pair.publicKey)).toBe(false);
    expect(verifyStrict(message, sig, pair.publicKey.subarray(0, 31))).toBe(false);
    expect(verifyStrict(message, new Uint8Array([...sig, 0]), pair.publicKey)).toBe(false);
  });
});
