import { sha256Hex } from '../canonical/canonicalize.js';

/** A key's id: lower-case hex SHA-256 of the raw 32-byte Ed25519 public key. */
export function keyIdOf(publicKey: Uint8Array): string {
  return sha256Hex(publicKey);
}
