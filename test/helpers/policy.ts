import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ringfence } from './cli.js';

export interface Org {
  readonly dir: string;
  readonly root: string;
  readonly policyKey: string;
}

/** An organisation made with the real CLI: a root key, a policy key, and a signed trust root. */
export async function makeOrg(dir: string): Promise<Org> {
  await mkdir(join(dir, 'keys'), { recursive: true });
  for (const name of ['root', 'policy']) {
    const made = await ringfence(['policy', 'keygen', '--out', join(dir, 'keys', name)]);
    expect(made.code, made.stderr).toBe(0);
  }
  const expires = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10);
  const root = join(dir, 'root.json');
  const init = await ringfence([
    'policy',
    'root',
    'init',
    '--root-key',
    join(dir, 'keys', 'root.pub'),
    '--root-threshold',
    '1',
    '--policy-key',
    join(dir, 'keys', 'policy.pub'),
    '--policy-threshold',
    '1',
    '--expires',
    expires,
    '--sign',
    join(dir, 'keys', 'root.key'),
    '--out',
    root,
  ]);
  expect(init.code, init.stderr).toBe(0);
  return { dir, root, policyKey: join(dir, 'keys', 'policy.key') };
}

/** Sign a policy document (given as an object, written as JSON source) with the org's policy key. */
export async function signPolicy(org: Org, policy: Record<string, unknown>, name: string): Promise<string> {
  const source = join(org.dir, `${name}.source.json`);
  const out = join(org.dir, `${name}.json`);
  await writeFile(source, JSON.stringify(policy, null, 2));
  const signed = await ringfence(['policy', 'sign', source, '--key', org.policyKey, '--out', out]);
  expect(signed.code, signed.stderr).toBe(0);
  return out;
}

export function policyDocument(fields: Record<string, unknown>): Record<string, unknown> {
  const now = Date.now();
  return {
    _type: 'ringfence/policy',
    spec_version: 1,
    name: 'e2e-corp',
    version: 1,
    issued_at: new Date(now - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    expires: new Date(now + 30 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    default_action: 'allow',
    ...fields,
  };
}

export async function install(policyFile: string, org: Org, env: Record<string, string>) {
  const result = await ringfence(['policy', 'install', policyFile, '--root', org.root], env);
  expect(result.code, result.stdout + result.stderr).toBe(0);
}
