import { type Ed25519KeyPair, signDetached, verifyStrict } from '../crypto/ed25519.js';
import { parseStrictJson } from '../json/strict.js';
import { keyIdOf } from '../keys/keyid.js';
import { refuse, type VerifyResult } from '../verify/result.js';
import { decodeBase64Strict, encodeBase64 } from './base64.js';

/** `payloadType` of a signed policy. */
export const POLICY_PAYLOAD_TYPE = 'application/vnd.ringfence.policy+json';
/** `payloadType` of a signed trust root. */
export const ROOT_PAYLOAD_TYPE = 'application/vnd.ringfence.root+json';

/** One DSSE signature. `keyid` is only a hint; the verifier trusts keys, not hints. */
export interface EnvelopeSignature {
  keyid: string;
  sig: string;
}

/** A DSSE envelope as stored on disk. */
export interface Envelope {
  payloadType: string;
  payload: string;
  signatures: EnvelopeSignature[];
}

/** An envelope whose shape was checked and whose payload was base64-decoded (not parsed). */
export interface OpenedEnvelope {
  envelope: Envelope;
  payloadBytes: Uint8Array;
}

const encoder = new TextEncoder();

/**
 * DSSE pre-authentication encoding: `"DSSEv1" SP len(type) SP type SP len(body) SP body`, lengths
 * in ASCII decimal bytes. Binding the type into what is signed stops a signature on a policy from
 * being replayed as a root, or the other way round.
 */
export function pae(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = encoder.encode(payloadType);
  const header = encoder.encode(`DSSEv1 ${type.length} ${payloadType} ${payload.length} `);
  const out = new Uint8Array(header.length + payload.length);
  out.set(header, 0);
  out.set(payload, header.length);
  return out;
}

/** Signs `payload` with every key pair given, producing one envelope. */
export function signEnvelope(payloadType: string, payload: Uint8Array, keys: Ed25519KeyPair[]): Envelope {
  const message = pae(payloadType, payload);
  return {
    payloadType,
    payload: encodeBase64(payload),
    signatures: keys.map((pair) => ({
      keyid: keyIdOf(pair.publicKey),
      sig: encodeBase64(signDetached(message, pair)),
    })),
  };
}

/** Adds signatures to an existing envelope (another signer of a threshold), keeping the ones there. */
export function addSignatures(envelope: Envelope, payload: Uint8Array, keys: Ed25519KeyPair[]): Envelope {
  const extra = signEnvelope(envelope.payloadType, payload, keys).signatures;
  const fresh = extra.filter((s) => !envelope.signatures.some((existing) => existing.keyid === s.keyid));
  return { ...envelope, signatures: [...envelope.signatures, ...fresh] };
}

/**
 * Reads an envelope strictly (no duplicate or unknown members, strict base64) and checks its
 * `payloadType`. The payload is decoded but not parsed: nothing reads it before its signatures
 * are checked. Never throws.
 */
export function openEnvelope(text: string, expectedType: string): VerifyResult<OpenedEnvelope> {
  let raw: unknown;
  try {
    raw = parseStrictJson(text);
  } catch (error) {
    return refuse('ENVELOPE_MALFORMED', `The envelope is not valid JSON: ${(error as Error).message}`);
  }
  const shape = checkShape(raw);
  if (typeof shape === 'string') {
    return refuse(
      'ENVELOPE_MALFORMED',
      `The file is not a DSSE envelope: ${shape}. Re-sign it with \`ringfence policy sign\`.`,
    );
  }
  if (shape.payloadType !== expectedType) {
    return refuse(
      'ENVELOPE_WRONG_PAYLOAD_TYPE',
      `The envelope's payloadType is ${JSON.stringify(shape.payloadType)}, expected ${JSON.stringify(expectedType)}; ` +
        'check that the right file was given (a policy where a root was expected, or the other way round).',
    );
  }
  const payloadBytes = decodeBase64Strict(shape.payload);
  if (!payloadBytes) return refuse('ENVELOPE_MALFORMED', 'The envelope payload is not valid base64.');
  return { ok: true, envelope: shape, payloadBytes };
}

function checkShape(raw: unknown): Envelope | string {
  if (!isRecord(raw)) return 'the top level is not an object';
  const extra = Object.keys(raw).filter((k) => k !== 'payloadType' && k !== 'payload' && k !== 'signatures');
  if (extra.length > 0) return `unknown member ${JSON.stringify(extra[0])}`;
  const { payloadType, payload, signatures } = raw;
  if (typeof payloadType !== 'string') return 'payloadType is missing or not a string';
  if (typeof payload !== 'string') return 'payload is missing or not a string';
  if (!Array.isArray(signatures)) return 'signatures is missing or not an array';
  if (signatures.length > 64) return 'more than 64 signatures';
  const checked: EnvelopeSignature[] = [];
  for (const [i, s] of signatures.entries()) {
    if (!isRecord(s)) return `signature ${i} is not an object`;
    if (Object.keys(s).some((k) => k !== 'keyid' && k !== 'sig'))
      return `signature ${i} has an unknown member`;
    if (typeof s.keyid !== 'string' || typeof s.sig !== 'string')
      return `signature ${i} needs string keyid and sig`;
    checked.push({ keyid: s.keyid, sig: s.sig });
  }
  return { payloadType, payload, signatures: checked };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A public key that a trust root vouches for. */
export interface TrustedKey {
  keyid: string;
  publicKey: Uint8Array;
}

/** Outcome of counting signatures for a role. */
export interface ThresholdCount {
  /** Distinct trusted keyids with a valid signature, in role order. */
  signers: string[];
  met: boolean;
}

/**
 * Counts valid signatures over the PAE from distinct keys of a role. A key counts once however
 * many signatures name it; a signature only counts if it verifies strictly (canonical S, usable
 * key, right lengths) under a key of the role. Never throws.
 */
export function countSignatures(
  opened: OpenedEnvelope,
  roleKeys: readonly TrustedKey[],
  threshold: number,
): ThresholdCount {
  const message = pae(opened.envelope.payloadType, opened.payloadBytes);
  const signers: string[] = [];
  const counted = new Set<string>();
  for (const key of roleKeys) {
    if (counted.has(key.keyid)) continue;
    for (const candidate of opened.envelope.signatures) {
      if (candidate.keyid !== key.keyid) continue;
      const sig = decodeBase64Strict(candidate.sig);
      if (sig && verifyStrict(message, sig, key.publicKey)) {
        counted.add(key.keyid);
        signers.push(key.keyid);
        break;
      }
    }
  }
  return { signers, met: threshold >= 1 && signers.length >= threshold };
}
