// policies/ is part of the contract: the published schema must be the one the verifier uses,
// the example must validate, and the signed example must verify and carry the example's content.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { readPolicySource } from '../authoring/source.js';
import { canonicalize } from '../canonical/canonicalize.js';
import { readPublicKeyFile } from '../keys/keyfile.js';
import { verifyRootChain } from '../root/root.js';
import { POLICY_SCHEMA } from './schema.js';
import { verifyPolicy } from './verify.js';

const policies = new URL('../../../../policies/', import.meta.url);
const read = (name: string) => readFile(new URL(name, policies), 'utf8');
const NOW = Date.parse('2026-11-29T12:00:00Z');

describe('policies/ folder', () => {
  it('policy.schema.json is the schema the verifier applies (regenerate: npm run build && npm run schema)', async () => {
    expect(JSON.parse(await read('policy.schema.json'))).toEqual(JSON.parse(JSON.stringify(POLICY_SCHEMA)));
  });

  it('example.policy.json verifies against example.root.json and is example.policy.yaml signed', async () => {
    const root = verifyRootChain([await read('example.root.json')], { now: NOW });
    if (!root.ok) throw new Error(`${root.code}: ${root.message}`);
    const verified = verifyPolicy(await read('example.policy.json'), { root: root.root, now: NOW });
    if (!verified.ok)
      throw new Error(`${verified.code}: ${verified.message} (regenerate: npm run sign-examples)`);
    const source = readPolicySource(await read('example.policy.yaml'), 'example.policy.yaml');
    expect(canonicalize(verified.policy)).toBe(canonicalize(source));
    expect(verified.expiresAt - NOW).toBeGreaterThan(365 * 86_400_000);
  });

  it('the example root trusts exactly the TEST-ONLY keys', async () => {
    const root = verifyRootChain([await read('example.root.json')], { now: NOW });
    if (!root.ok) throw new Error(root.message);
    const rootKey = await readPublicKeyFile(new URL('test-keys/TEST-ONLY-root.pub', policies).pathname);
    const policyKey = await readPublicKeyFile(new URL('test-keys/TEST-ONLY-policy.pub', policies).pathname);
    expect(root.root.payload.roles.root.keyids).toEqual([rootKey.keyid]);
    expect(root.root.payload.roles.policy.keyids).toEqual([policyKey.keyid]);
  });
});

describe('policy sources', () => {
  it('refuses duplicate YAML keys, aliases and schema errors before signing', () => {
    const good =
      '_type: ringfence/policy\nspec_version: 1\nname: a\nversion: 1\nissued_at: 2026-01-01T00:00:00Z\nexpires: 2027-01-01T00:00:00Z\ndefault_action: deny\n';
    expect(readPolicySource(good, 'p.yaml').name).toBe('a');
    expect(() => readPolicySource(`${good}name: b\n`, 'p.yaml')).toThrow(/unique/);
    expect(() => readPolicySource(`${good}rules: &r []\nmcp: *r\n`, 'p.yaml')).toThrow(/[Aa]lias/);
    expect(() => readPolicySource(`${good}extra: 1\n`, 'p.yaml')).toThrow(/unknown field "extra"/);
    expect(() => readPolicySource(good.replace('deny', 'maybe'), 'p.yaml')).toThrow(
      /one of "allow", "deny", "ask"/,
    );
    expect(() => readPolicySource('{"a":1,"a":2}', 'p.json')).toThrow(/duplicate/);
    expect(() =>
      readPolicySource(
        `${good}rules: [{id: a, action: deny, when: [{arg: /x, equals: {__proto__: 1}}]}]\n`,
        'p.yaml',
      ),
    ).toThrow(/__proto__/);
  });
});

describe('docs/policy.md', () => {
  it('lists every verification reason code a user can see', async () => {
    const { VERIFY_CODES } = await import('../verify/result.js');
    const docs = await readFile(new URL('../../../../docs/policy.md', import.meta.url), 'utf8');
    const missing = VERIFY_CODES.filter((code) => !new RegExp(`^\\| \`${code}\` +\\|`, 'm').test(docs));
    expect(missing).toEqual([]);
  });
});
