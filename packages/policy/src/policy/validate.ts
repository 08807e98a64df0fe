import type { ValidateFunction } from 'ajv/dist/2020.js';
import { compileSchema, describeSchemaError } from './ajv.js';
import { parseDateTime } from './datetime.js';
import { POLICY_SCHEMA } from './schema.js';
import { type Policy, pinSubject } from './types.js';

let validator: ValidateFunction<Policy> | undefined;

/** Outcome of {@link validatePolicy}. */
export type PolicyValidation =
  | { ok: true; policy: Policy }
  | { ok: false; code: 'POLICY_SCHEMA' | 'POLICY_WRONG_TYPE'; message: string };

/**
 * Checks a parsed payload against the policy schema and the rules a schema cannot say: server
 * entries and rule ids are unique, pins name each tool and each prompt once, no rule names both a tool and a prompt, `issued_at` is before `expires`.
 */
export function validatePolicy(value: unknown): PolicyValidation {
  validator ??= compileSchema<Policy>(POLICY_SCHEMA);
  if (!validator(value)) {
    const first = validator.errors?.[0];
    if (first?.instancePath === '/_type') {
      return {
        ok: false,
        code: 'POLICY_WRONG_TYPE',
        message: `The payload's _type is not "ringfence/policy"; this is not a ringfence policy.`,
      };
    }
    return {
      ok: false,
      code: 'POLICY_SCHEMA',
      message: `The policy ${describeSchemaError(validator.errors)}. Fix the source (see policies/policy.schema.json) and sign it again.`,
    };
  }
  const policy = value;
  const problem = semanticProblem(policy);
  if (problem) {
    return {
      ok: false,
      code: 'POLICY_SCHEMA',
      message: `The policy ${problem}. Fix the source and sign it again.`,
    };
  }
  return { ok: true, policy };
}

function semanticProblem(policy: Policy): string | undefined {
  const servers = new Set<string>();
  for (const entry of policy.mcp ?? []) {
    if (servers.has(entry.server)) return `lists server ${JSON.stringify(entry.server)} twice in mcp`;
    servers.add(entry.server);
    const pinned = new Set<string>();
    for (const pin of entry.pins ?? []) {
      const { kind, name } = pinSubject(pin);
      const key = `${kind}\u0000${name}`;
      if (pinned.has(key)) return `pins ${kind} ${JSON.stringify(name)} of ${entry.server} twice`;
      pinned.add(key);
    }
  }
  const ids = new Set<string>();
  for (const rule of policy.rules ?? []) {
    if (ids.has(rule.id)) return `has two rules with id ${JSON.stringify(rule.id)}`;
    // Calls name a tool or a prompt, never both: such a rule could never match.
    if (rule.match?.tool !== undefined && rule.match.prompt !== undefined)
      return `has rule ${JSON.stringify(rule.id)} naming both a tool and a prompt (a call names one or the other)`;
    ids.add(rule.id);
  }
  const issued = parseDateTime(policy.issued_at)!;
  const expires = parseDateTime(policy.expires)!;
  if (issued >= expires) return 'expires before it was issued (issued_at must be earlier than expires)';
  return undefined;
}
