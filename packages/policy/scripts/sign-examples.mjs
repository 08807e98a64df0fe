// Signs policies/example.policy.yaml with the TEST-ONLY keys into policies/example.policy.json,
// and writes the example trust root policies/example.root.json. Ed25519 signatures are
// deterministic, so re-running this on unchanged inputs gives identical files.
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { buildRoot, readPolicySource, readPrivateKeyFile, signPolicy, signRoot } from '../dist/index.js';

const policies = new URL('../../../policies/', import.meta.url);
const keyPath = (name) => new URL(`test-keys/TEST-ONLY-${name}.key`, policies).pathname;
// git does not keep the 0600 mode; these keys are public test keys anyway.
for (const name of ['root', 'policy']) await chmod(keyPath(name), 0o600);
const rootKey = await readPrivateKeyFile(keyPath('root'));
const policyKey = await readPrivateKeyFile(keyPath('policy'));

const root = buildRoot({
  version: 1,
  expires: '2031-12-31T00:00:00Z',
  rootKeys: [rootKey.publicKey],
  rootThreshold: 1,
  policyKeys: [policyKey.publicKey],
  policyThreshold: 1,
});
await writeFile(
  new URL('example.root.json', policies),
  `${JSON.stringify(signRoot(root, [rootKey]), null, 2)}\n`,
);

const sourcePath = new URL('example.policy.yaml', policies).pathname;
const policy = readPolicySource(await readFile(sourcePath, 'utf8'), sourcePath);
await writeFile(
  new URL('example.policy.json', policies),
  `${JSON.stringify(signPolicy(policy, [policyKey]), null, 2)}\n`,
);
console.log('wrote policies/example.root.json and policies/example.policy.json (TEST-ONLY keys)');
