import nacl from 'tweetnacl';

/** Raw Ed25519 public key length in bytes. */
export const PUBLIC_KEY_BYTES = 32;
/** Ed25519 seed (private key) length in bytes. */
export const SEED_BYTES = 32;
/** Ed25519 signature length in bytes. */
export const SIGNATURE_BYTES = 64;

const P = 2n ** 255n - 19n;
/** Order of the prime-order subgroup. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const D = (-121665n * modInverse(121666n)) % P;
const SQRT_M1 = modPow(2n, (P - 1n) / 4n, P);

function mod(a: bigint, m = P): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

function modPow(base: bigint, exponent: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

function modInverse(a: bigint): bigint {
  return modPow(a, P - 2n, P);
}

function littleEndianToBigInt(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/** Why a public key is not accepted. */
export type PublicKeyProblem = 'wrong-length' | 'not-canonical' | 'not-on-curve' | 'small-order';

/**
 * Checks a raw Ed25519 public key before it is trusted.
 *
 * tweetnacl verifies against any 32 bytes. A small-order key (one of the 8 torsion points, in
 * any encoding) lets a signature verify for many messages without knowing a private key, so
 * such keys are refused, as are non-canonical encodings (y ≥ p) and points not on the curve.
 * The order check multiplies by the cofactor 8 and looks for the identity.
 */
export function checkPublicKey(key: Uint8Array): PublicKeyProblem | undefined {
  if (key.length !== PUBLIC_KEY_BYTES) return 'wrong-length';
  // The BigInt arithmetic costs about 2 ms; a trust root has few keys and they recur.
  const cacheKey = Buffer.from(key).toString('hex');
  const cached = keyChecks.get(cacheKey);
  if (cached !== undefined) return cached === 'ok' ? undefined : cached;
  const problem = computeKeyProblem(key);
  if (keyChecks.size >= 1024) keyChecks.clear();
  keyChecks.set(cacheKey, problem ?? 'ok');
  return problem;
}

const keyChecks = new Map<string, PublicKeyProblem | 'ok'>();

function computeKeyProblem(key: Uint8Array): PublicKeyProblem | undefined {
  const sign = (key[31]! >> 7) & 1;
  const yBytes = Uint8Array.from(key);
  yBytes[31] = yBytes[31]! & 0x7f;
  const y = littleEndianToBigInt(yBytes);
  if (y >= P) return 'not-canonical';
  // x² = (y² - 1) / (d y² + 1)
  const y2 = (y * y) % P;
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  const x2 = mod(u * modInverse(v));
  let x = modPow(x2, (P + 3n) / 8n, P);
  if (mod(x * x - x2) !== 0n) x = mod(x * SQRT_M1);
  if (mod(x * x - x2) !== 0n) return 'not-on-curve';
  if (x === 0n && sign === 1) return 'not-canonical';
  if (sign !== Number(x & 1n)) x = mod(-x);
  let point: Point = { x, y };
  for (let i = 0; i < 3; i++) point = double(point);
  if (point.x === 0n && point.y === 1n) return 'small-order';
  return undefined;
}

interface Point {
  x: bigint;
  y: bigint;
}

/** Affine twisted-Edwards doubling; speed does not matter for a handful of trusted keys. */
function double({ x, y }: Point): Point {
  const xy = (x * y) % P;
  const x2 = (x * x) % P;
  const y2 = (y * y) % P;
  const dxxyy = (D * ((xy * xy) % P)) % P;
  return {
    x: mod(2n * xy * modInverse(mod(1n + dxxyy))),
    y: mod((y2 + x2) * modInverse(mod(1n - dxxyy))),
  };
}

/**
 * True when the scalar S of a signature (its last 32 bytes, little-endian) is below the group
 * order L. tweetnacl accepts S + L as well, which makes a second valid signature for the same
 * message (malleability); RFC 8032 requires refusing it.
 */
export function hasCanonicalScalar(signature: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_BYTES) return false;
  return littleEndianToBigInt(signature.subarray(32)) < L;
}

/** The group order, for tests that build malleated signatures. */
export const GROUP_ORDER = L;

/**
 * Strict Ed25519 verification: lengths, canonical S and a usable public key are checked before
 * tweetnacl verifies the equation. Never throws.
 */
export function verifyStrict(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_BYTES || publicKey.length !== PUBLIC_KEY_BYTES) return false;
  if (!hasCanonicalScalar(signature)) return false;
  if (checkPublicKey(publicKey) !== undefined) return false;
  try {
    return nacl.sign.detached.verify(message, signature, publicKey);
  } catch {
    return false;
  }
}

/** An Ed25519 key pair derived from a 32-byte seed. */
export interface Ed25519KeyPair {
  seed: Uint8Array;
  publicKey: Uint8Array;
  /** tweetnacl's 64-byte secret key (seed ‖ public key). */
  secretKey: Uint8Array;
}

/** Derives the key pair for a seed. */
export function keyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  const pair = nacl.sign.keyPair.fromSeed(seed);
  return { seed: Uint8Array.from(seed), publicKey: pair.publicKey, secretKey: pair.secretKey };
}

/** A fresh key pair from the operating system's CSPRNG (tweetnacl uses crypto.randomBytes). */
export function generateKeyPair(): Ed25519KeyPair {
  return keyPairFromSeed(nacl.randomBytes(SEED_BYTES));
}

/** Detached Ed25519 signature. */
export function signDetached(message: Uint8Array, pair: Ed25519KeyPair): Uint8Array {
  return nacl.sign.detached(message, pair.secretKey);
}
