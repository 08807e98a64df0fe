import { describe, expect, it } from 'vitest';
import { testKey } from '../testing/fixtures.js';
import { decodeBase64Strict, encodeBase64 } from './base64.js';
import { countSignatures, openEnvelope, POLICY_PAYLOAD_TYPE, pae, signEnvelope } from './envelope.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('DSSE envelope', () => {
  it('PAE matches the DSSE specification example', () => {
    expect(text(pae('http://example.com/HelloWorld', new TextEncoder().encode('hello world')))).toBe(
      'DSSEv1 29 http://example.com/HelloWorld 11 hello world',
    );
  });

  it('PAE counts bytes, not characters', () => {
    expect(text(pae('t', new TextEncoder().encode('€')))).toBe('DSSEv1 1 t 3 €');
  });

  it('counts each trusted key once however many times it signed', () => {
    const a = testKey(1);
    const b = testKey(2);
    const payload = new TextEncoder().encode('{}');
    const env = signEnvelope(POLICY_PAYLOAD_TYPE, payload, [a, a, a]);
    const opened = openEnvelope(JSON.stringify(env), POLICY_PAYLOAD_TYPE);
    if (!opened.ok) throw new Error(opened.message);
    const role = [
      { keyid: env.signatures[0]!.keyid, publicKey: a.publicKey },
      { keyid: env.signatures[0]!.keyid, publicKey: a.publicKey },
    ];
    expect(countSignatures(opened, role, 2)).toEqual({ signers: [env.signatures[0]!.keyid], met: false });
    const both = signEnvelope(POLICY_PAYLOAD_TYPE, payload, [a, b]);
    const openedBoth = openEnvelope(JSON.stringify(both), POLICY_PAYLOAD_TYPE);
    if (!openedBoth.ok) throw new Error(openedBoth.message);
    const roleBoth = both.signatures.map((s, i) => ({ keyid: s.keyid, publicKey: [a, b][i]!.publicKey }));
    expect(countSignatures(openedBoth, roleBoth, 2).met).toBe(true);
  });

  it('does not count a signature whose keyid hint points at another trusted key', () => {
    const a = testKey(1);
    const b = testKey(2);
    const env = signEnvelope(POLICY_PAYLOAD_TYPE, new Uint8Array([1]), [a]);
    const bId = signEnvelope(POLICY_PAYLOAD_TYPE, new Uint8Array([1]), [b]).signatures[0]!.keyid;
    env.signatures[0]!.keyid = bId; // a's signature claiming to be b's
    const opened = openEnvelope(JSON.stringify(env), POLICY_PAYLOAD_TYPE);
    if (!opened.ok) throw new Error(opened.message);
    expect(countSignatures(opened, [{ keyid: bId, publicKey: b.publicKey }], 1).met).toBe(false);
  });

  it.each([
    ['not JSON', 'nope'],
    ['an array', '[]'],
    ['a missing payload', '{"payloadType":"x","signatures":[]}'],
    ['an unknown member', `{"payloadType":"${POLICY_PAYLOAD_TYPE}","payload":"","signatures":[],"extra":1}`],
    [
      'a duplicate member',
      `{"payloadType":"${POLICY_PAYLOAD_TYPE}","payload":"","payload":"e30=","signatures":[]}`,
    ],
    ['bad base64', `{"payloadType":"${POLICY_PAYLOAD_TYPE}","payload":"e30","signatures":[]}`],
    [
      'a signature with a number keyid',
      `{"payloadType":"${POLICY_PAYLOAD_TYPE}","payload":"","signatures":[{"keyid":1,"sig":""}]}`,
    ],
  ])('refuses %s as ENVELOPE_MALFORMED', (_name, input) => {
    const result = openEnvelope(input, POLICY_PAYLOAD_TYPE);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.code).toBe('ENVELOPE_MALFORMED');
  });

  it('strict base64 refuses what Buffer would silently accept', () => {
    expect(decodeBase64Strict('e30=')).toEqual(new Uint8Array([0x7b, 0x7d]));
    expect(decodeBase64Strict('e31=')).toBeUndefined(); // non-zero padding bits
    expect(decodeBase64Strict('e3 0=')).toBeUndefined();
    expect(decodeBase64Strict('e30')).toBeUndefined();
    expect(decodeBase64Strict('e3-_')).toBeUndefined();
    expect(encodeBase64(new Uint8Array([0xff]))).toBe('/w==');
  });
});
