import { describe, expect, it } from 'vitest';
import type { KnownCredential } from '../known.js';
import { findFormats } from './formats.js';
import { marker, type Reach, SecretScanner } from './scanner.js';

const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const STORED = 'p9Xq2LmZ8vR4tKw7';
const stored: KnownCredential = { id: 'deploy', class: 'generic', value: STORED, boundTo: ['deployer'] };
const known = (...credentials: KnownCredential[]) => ({ all: async () => credentials });
const NET: Reach = { kind: 'hosts', hosts: ['api.example.com'] };

const scanner = new SecretScanner(known(stored));
const egress = (args: unknown, server = 'other', reach: Reach = NET) => scanner.egress(args, server, reach);

// Built so no whole token sits in this file (push protection and the like read sources too).
const FORMATS: Record<string, string> = {
  github: `ghp_${'a1B2'.repeat(9)}`,
  'github-pat': `github_pat_${'11ABCDEFG0'.repeat(3)}_${'x'.repeat(20)}`,
  gitlab: `glpat-${'Ab1-'.repeat(5)}`,
  slack: `xoxb-${'1234567890'}-${'abcdefghijkl'}`,
  stripe: `sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`,
  google: `AIza${'SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv'}`,
  openai: `sk-proj-${'abcdefghijklmnop0123456789'}`,
  anthropic: `sk-ant-api03-${'abcdefghijklmnopqrstuvwxyz012345'}`,
  aws: AWS_ID,
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  'private-key':
    '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----',
};

describe('known formats', () => {
  for (const [name, token] of Object.entries(FORMATS)) {
    it(`finds ${name} inside prose, whole`, () => {
      const text = `here: ${token} (end)`;
      const hits = findFormats(text);
      expect(hits.length, name).toBeGreaterThan(0);
      expect(text.slice(hits[0]!.start, hits[0]!.end)).toBe(token);
    });
  }
  it('names classes (sk-ant- is anthropic, sk- openai)', () => {
    expect(findFormats(FORMATS.anthropic!)[0]!.class).toBe('anthropic');
    expect(findFormats(FORMATS.openai!)[0]!.class).toBe('openai');
    expect(findFormats(FORMATS['private-key']!)[0]!.class).toBe('private-key');
  });
  it('does not match prose, identifiers or near misses', () => {
    for (const text of [
      'the task-list for mask-editing',
      'AKIA is a prefix; AKIAIOSFODNN7EXAMPLEX is too long',
      'xAKIAIOSFODNN7EXAMPLE',
      'ghp_short',
      'eyJhbGciOi.short.x',
      '-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----',
    ])
      expect(findFormats(text), text).toEqual([]);
  });
  it('a private key cut short runs to the end of the text', () => {
    const text = 'x -----BEGIN RSA PRIVATE KEY-----\nMIIE';
    const [hit] = findFormats(text);
    expect(hit).toMatchObject({ start: 2, end: text.length, class: 'private-key' });
  });
});

describe('egress: arguments', () => {
  it('refuses a known format in a nested field, naming class and path, never the value', async () => {
    const hits = await egress({ config: { region: 'eu', creds: [`key ${AWS_ID}`] } });
    expect(hits).toEqual([{ class: 'aws', path: '/config/creds/0', split: false, why: 'unstored' }]);
    expect(JSON.stringify(hits)).not.toContain(AWS_ID);
  });
  it('finds the AWS secret key beside its id (same string or a sibling), not alone', async () => {
    const beside = await egress({ id: AWS_ID, secret: AWS_SECRET });
    expect(beside.map((h) => h.path).sort()).toEqual(['/id', '/secret']);
    expect(await egress({ secret: AWS_SECRET })).toEqual([]);
    const file = `[default]\naws_access_key_id = ${AWS_ID}\naws_secret_access_key = ${AWS_SECRET}\n`;
    expect(await egress({ text: file })).toMatchObject([{ class: 'aws', path: '/text' }]);
    const { value, removed } = await scanner.redact(file);
    expect(value).not.toContain(AWS_SECRET);
    expect(removed.get('aws')).toBe(2);
  });
  it('a stored credential goes to the server it is bound to, and to no other', async () => {
    expect(await egress({ token: STORED }, 'deployer')).toEqual([]);
    expect(await egress({ token: STORED }, 'other')).toEqual([
      { class: 'generic', path: '/token', split: false, credential: 'deploy', why: 'not-bound' },
    ]);
  });
  it('a bound credential is refused too when the server has no network', async () => {
    expect(await egress({ token: STORED }, 'deployer', { kind: 'none' })).toMatchObject([
      { why: 'no-network' },
    ]);
  });
  it('a known-format value stored and bound passes to its server (the format hit is that value)', async () => {
    const own = new SecretScanner(
      known({ id: 'gh', class: 'github', value: FORMATS.github!, boundTo: ['git'] }),
    );
    expect(await own.egress({ t: `token ${FORMATS.github}` }, 'git', NET)).toEqual([]);
    expect(await own.egress({ t: FORMATS.github }, 'other', NET)).toEqual([
      { class: 'github', path: '/t', split: false, credential: 'gh', why: 'not-bound' },
    ]);
  });

  const bytes = Buffer.from(STORED);
  const derived: Record<string, string> = {
    'base64 padded': Buffer.from(`x${STORED}`).toString('base64'),
    'base64 at offset 0': bytes.toString('base64'),
    'base64 at offset 2': Buffer.concat([Buffer.from('ab'), bytes, Buffer.from('tail')]).toString('base64'),
    'base64url unpadded': Buffer.concat([Buffer.from('?'), bytes]).toString('base64url'),
    'percent-encoded': encodeURIComponent(`a b/${STORED}`),
    'every byte percent-encoded': [...bytes].map((b) => `%${b.toString(16)}`).join(''),
    'hex lower': bytes.toString('hex'),
    'hex upper': bytes.toString('hex').toUpperCase(),
  };
  for (const [name, text] of Object.entries(derived)) {
    it(`finds a stored value written as ${name}`, async () => {
      expect(await egress({ blob: `data=${text};` })).toMatchObject([
        { credential: 'deploy', path: '/blob' },
      ]);
    });
  }
  it('a value with characters JSON escapes is found inside JSON text', async () => {
    const quoted = new SecretScanner(
      known({ id: 'q', class: 'generic', value: 'pa"ss\\word12', boundTo: [] }),
    );
    const text = JSON.stringify({ password: 'pa"ss\\word12' });
    expect(await quoted.egress({ body: text }, 's', NET)).toMatchObject([{ credential: 'q' }]);
  });

  it('split across sibling string values, array items or keys: found, at the container', async () => {
    const half = STORED.length / 2;
    expect(await egress({ a: STORED.slice(0, half), n: 1, b: STORED.slice(half) })).toMatchObject([
      { path: '', split: true, credential: 'deploy' },
    ]);
    expect(await egress({ list: ['AKIAIOSF', 'ODNN7EXA', 'MPLE'] })).toMatchObject([
      { class: 'aws', path: '/list', split: true },
    ]);
    expect(await egress({ x: { [STORED.slice(0, 5)]: 1, [STORED.slice(5)]: 2 } })).toMatchObject([
      { path: '/x', split: true },
    ]);
  });
  it('split at the edges of long siblings (only their heads and tails are read again): found', async () => {
    const long = 'x '.repeat(20000);
    expect(await egress({ a: `${long}AKIAIOSF`, b: `ODNN7EXAMPLE ${long}`, c: long })).toMatchObject([
      { class: 'aws', path: '', split: true },
    ]);
    const { value } = await scanner.redact({
      a: `${long}${STORED.slice(0, 4)}`,
      b: STORED.slice(4, 9),
      c: `${STORED.slice(9)}${long}`,
    });
    expect(JSON.stringify(value)).not.toContain(STORED.slice(4, 9));
    expect(value.a.endsWith(marker('generic'))).toBe(true);
  });
  it('a secret in an object key: found, and the key never written into a path', async () => {
    const hits = await egress({ outer: { [AWS_ID]: { deeper: FORMATS.github } } });
    expect(hits).toMatchObject([
      { class: 'aws', path: '/outer' },
      { class: 'github', path: '/outer/~secret/deeper' },
    ]);
    expect(JSON.stringify(hits)).not.toContain('AKIA');
  });
  it('a secret key whose own value holds a secret: the value hit is placed at ~secret, not at the key', async () => {
    for (const [args, key] of [
      [{ note: { [STORED]: FORMATS.github } }, STORED],
      [{ [FORMATS.github!]: AWS_ID }, FORMATS.github!],
      [{ [`${STORED.slice(0, 6)}`]: 'x', [`${STORED.slice(6)}`]: FORMATS.jwt }, STORED.slice(6)],
      [{ a: { [FORMATS['private-key']!]: `token ${STORED}` } }, 'PRIVATE KEY'],
    ] as const) {
      const hits = await egress(args);
      expect(hits.length, JSON.stringify(hits)).toBeGreaterThan(1);
      expect(JSON.stringify(hits.map((h) => h.path))).not.toContain(key);
      expect(
        hits.some((h) => h.path.endsWith('/~secret')),
        JSON.stringify(hits),
      ).toBe(true);
    }
  });
  it('hostile inputs: deep nesting, many keys, a huge string, prefix floods', async () => {
    let deep: unknown = { k: AWS_ID };
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect((await egress(deep)).map((h) => h.class)).toEqual(['aws']);
    const many = Object.fromEntries(Array.from({ length: 20000 }, (_, i) => [`k${i}`, `v${i}`]));
    many.k19999 = FORMATS.slack!;
    expect(await egress(many)).toMatchObject([{ class: 'slack', path: '/k19999' }]);
    for (const flood of ['sk-', 'eyJ-', 'AKIA', '-----BEGIN ', 'ghp_', STORED.slice(0, 7)]) {
      const text = flood.repeat(Math.ceil((1 << 20) / flood.length));
      // A flood of `sk-` is itself one long sk- token; the others are nothing. Linear either way.
      expect((await egress({ text })).length, flood).toBe(flood === 'sk-' ? 1 : 0);
    }
    const huge = `${'x'.repeat(1 << 20)} ${AWS_ID}`;
    expect(await egress({ huge })).toMatchObject([{ class: 'aws', path: '/huge' }]);
  });
});

describe('ingress: results', () => {
  it('replaces each hit by a marker naming its class, counts them, leaves the input unchanged', async () => {
    const result = {
      content: [{ type: 'text', text: `id ${AWS_ID} and ${STORED}` }],
      structuredContent: { nested: { list: [FORMATS.jwt] } },
    };
    const before = JSON.stringify(result);
    const { value, removed } = await scanner.redact(result);
    expect(JSON.stringify(result)).toBe(before);
    expect(value.content[0]!.text).toBe(`id ${marker('aws')} and ${marker('generic')}`);
    expect(value.structuredContent.nested.list[0]).toBe('[ringfence: JWT removed]');
    expect(Object.fromEntries(removed)).toEqual({ aws: 1, generic: 1, jwt: 1 });
  });
  it('a blob holding a stored value becomes a text marker; other blobs pass untouched', async () => {
    const data = Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(STORED)]).toString('base64');
    const { value } = await scanner.redact({
      content: [
        { type: 'image', data, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///x', blob: data } },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
    });
    expect(value.content[0]).toEqual({ type: 'text', text: marker('generic') });
    expect(value.content[1]!.resource).toEqual({
      uri: 'file:///x',
      mimeType: 'text/plain',
      text: marker('generic'),
    });
    expect(value.content[2]!.data).toBe('AAAA');
  });
  it('a key holding a secret is renamed in place', async () => {
    const { value } = await scanner.redact({ a: 1, [AWS_ID]: 2, z: 3 });
    expect(Object.keys(value)).toEqual(['a', marker('aws'), 'z']);
  });
  it('nothing found: the same object back', async () => {
    const result = { content: [{ type: 'text', text: 'fine' }] };
    expect((await scanner.redact(result)).value).toBe(result);
  });
});
