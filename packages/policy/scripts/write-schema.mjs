// Writes policies/policy.schema.json from the schema compiled into the package (run after build).
// A test fails when the published copy and the code drift apart.
import { writeFile } from 'node:fs/promises';
import { POLICY_SCHEMA } from '../dist/index.js';

const target = new URL('../../../policies/policy.schema.json', import.meta.url);
await writeFile(target, `${JSON.stringify(POLICY_SCHEMA, null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
