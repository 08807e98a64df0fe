import { type Condition, pinSubject, type Rule } from '../policy/types.js';
import type { VerifiedPolicy } from '../policy/verify.js';

const DAY_MS = 86_400_000;

/**
 * A human summary of what a verified policy allows, for `ringfence policy show`: who signed it,
 * how long it is valid, which images, tools, pins and hosts, and the call rules in order.
 */
export function summarizePolicy(verified: VerifiedPolicy, now: number): string[] {
  const { policy } = verified;
  const days = Math.floor((verified.expiresAt - now) / DAY_MS);
  const lines = [
    `Policy ${policy.name} version ${policy.version} (verified)`,
    `  signed by   ${verified.signers.join(', ')}`,
    `              ${verified.signers.length} of the ${verified.root.payload.roles.policy.threshold} required by trust root version ${verified.root.version}`,
    `  issued      ${policy.issued_at}`,
    `  expires     ${policy.expires} (in ${days} day${days === 1 ? '' : 's'})`,
    `  digest      ${verified.digest}`,
    '',
    policy.allowed_mcp?.length ? 'Images that may run as servers:' : 'Images that may run as servers: any',
  ];
  for (const image of policy.allowed_mcp ?? []) {
    lines.push(`  ${image}${/sha256:/.test(image) ? '   (this content only)' : '   (by name)'}`);
  }
  lines.push('', `Network for servers without listed hosts: ${policy.default_egress ?? 'deny'}`);
  lines.push(
    `New servers (first sight): ${policy.first_sight === 'withhold' ? 'withheld until a person approves them (first_sight: withhold)' : 'pinned on first use; a developer may withhold them (mcp add --review-first)'}`,
    '',
  );
  lines.push(
    `OAuth logins (authorization servers): ${describeIssuers(policy.oauth?.authorization_servers)}`,
    '',
  );
  const servers = policy.mcp ?? [];
  lines.push(servers.length ? 'Servers:' : 'Servers: no per-server limits');
  for (const entry of servers) {
    lines.push(`  ${entry.server}`);
    lines.push(
      `    tools allowed    ${entry.allow_tools === undefined ? 'any' : entry.allow_tools.length ? entry.allow_tools.join(', ') : 'none'}`,
    );
    if (entry.pins) {
      lines.push(
        `    pinned           ${entry.pins.length} (only these definitions are exposed; nothing can be approved locally)`,
      );
      for (const pin of entry.pins.slice(0, 20))
        lines.push(
          `                     ${'tool' in pin ? pin.tool : 'instructions' in pin ? 'instructions' : `${pinSubject(pin).kind} ${pinSubject(pin).name}`}  ${pin.digest}`,
        );
      if (entry.pins.length > 20) lines.push(`                     … and ${entry.pins.length - 20} more`);
    }
    lines.push(
      `    network at most  ${entry.egress_allow?.length ? entry.egress_allow.join(', ') : (policy.default_egress ?? 'deny')}`,
    );
    if (entry.read_only_tools?.length) lines.push(`    read-only tools  ${entry.read_only_tools.join(', ')}`);
    if (entry.max_call_seconds !== undefined) lines.push(`    calls at most    ${entry.max_call_seconds} s`);
    if (entry.oauth !== undefined)
      lines.push(`    OAuth login at   ${describeIssuers(entry.oauth.authorization_servers)}`);
    if (entry.first_sight !== undefined)
      lines.push(
        `    first sight      ${entry.first_sight === 'withhold' ? 'withhold (until a person approves)' : 'pin (trusted on first use, unless registered with --review-first)'}`,
      );
    lines.push(
      `    may ask model    ${entry.allow_sampling ? 'yes, if registered with --allow-sampling' : 'no (sampling refused)'}`,
      `    may ask person   ${entry.allow_elicitation ? 'yes, if registered with --allow-elicitation' : 'no (elicitation refused)'}`,
    );
  }
  if (servers.length)
    lines.push('  any other server: no sampling, no elicitation (they need an entry that allows them)');
  lines.push(
    '',
    `Arguments with invisible characters: ${policy.refuse_invisible_arguments ? 'refused (refuse_invisible_arguments), unless the deciding rule lets them through' : 'shown escaped; refused only by rules that say refuse_invisible'}`,
  );
  lines.push('', 'Call rules (first match wins):');
  for (const [i, rule] of (policy.rules ?? []).entries()) lines.push(`  ${i + 1}. ${describeRule(rule)}`);
  lines.push(`  otherwise: ${policy.default_action}`);
  return lines;
}

function describeIssuers(issuers: readonly string[] | undefined): string {
  if (issuers === undefined) return 'any';
  return issuers.length ? issuers.join(', ') : 'none (OAuth logins refused)';
}

function describeRule(rule: Rule): string {
  const match = rule.match ?? {};
  const parts = (['server', 'tool', 'prompt', 'agent', 'scope'] as const)
    .filter((key) => match[key] !== undefined)
    .map((key) => `${key}=${match[key]}`);
  const conditions = (rule.when ?? []).map(describeCondition);
  const when = [...parts, ...conditions].join(' and ');
  const invisible =
    rule.refuse_invisible === undefined
      ? ''
      : rule.refuse_invisible
        ? ', refusing arguments with invisible characters'
        : ', letting arguments with invisible characters through';
  return `${rule.id}: ${rule.action}${when ? ` when ${when}` : ' (every call)'}${invisible}${rule.reason ? ` (${rule.reason})` : ''}`;
}

function describeCondition(condition: Condition): string {
  if ('exists' in condition) return `${condition.arg} ${condition.exists ? 'is present' : 'is absent'}`;
  if ('equals' in condition) return `${condition.arg} = ${JSON.stringify(condition.equals)}`;
  if ('in' in condition) return `${condition.arg} in ${JSON.stringify(condition.in)}`;
  return `${condition.arg} matches ${JSON.stringify(condition.glob)}`;
}
