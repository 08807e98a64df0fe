import { createHash, randomBytes } from 'node:crypto';

/** A PKCE pair (RFC 7636, S256 only): the verifier stays in this process, the challenge goes out. */
export interface PkcePair {
  readonly verifier: string;
  readonly challenge: string;
  readonly method: 'S256';
}

/** 32 random bytes, base64url: 43 characters, the RFC's recommended verifier length and entropy. */
export function createPkcePair(): PkcePair {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256(verifier), method: 'S256' };
}

export const s256 = (verifier: string): string =>
  createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** An unguessable `state` for one authorization request (CSRF, RFC 6749 §10.12). */
export const randomState = (): string => randomBytes(24).toString('base64url');
