import { canonicalize } from '../canonical/canonicalize.js';
import { MISSING, resolvePointer } from '../json/pointer.js';
import {
  type Action,
  type Condition,
  type EgressSecrets,
  type FirstSight,
  type PinKind,
  type Policy,
  type PolicyServer,
  pinSubject,
  type Rule,
} from '../policy/types.js';
import { globMatches } from './glob.js';

/**
 * Pure questions a gateway asks of a verified policy. None of them read files or the clock.
 * Lookups by server are indexed once per policy object.
 */

const indexes = new WeakMap<Policy, Map<string, PolicyServer>>();

function serverEntry(policy: Policy, server: string): PolicyServer | undefined {
  let index = indexes.get(policy);
  if (!index) {
    index = new Map((policy.mcp ?? []).map((entry) => [entry.server, entry]));
    indexes.set(policy, index);
  }
  return index.get(server);
}

/** An image as the gateway knows it: the configured reference and the content id it resolved to. */
export interface ImageIdentity {
  /** The reference as configured, e.g. `node:22-alpine` or `ghcr.io/x/y@sha256:…`. */
  name: string;
  /**
   * Content digests the image is known by: its image id and its repo digests, either bare
   * (`sha256:…`) or as Docker lists them (`name@sha256:…`).
   */
  digests?: string[];
}

/**
 * May this image run as a server? An empty or absent `allowed_mcp` allows any image. An entry
 * with a digest (`name@sha256:…` or a bare `sha256:…`) matches only an image whose content has
 * that digest, whatever its tag says; an entry without one matches the name exactly,
 * case-insensitively.
 */
export function isImageAllowed(policy: Policy, image: ImageIdentity): { allowed: boolean; entry?: string } {
  const list = policy.allowed_mcp ?? [];
  if (list.length === 0) return { allowed: true };
  const name = image.name.toLowerCase();
  const digests = new Set((image.digests ?? []).map((d) => d.slice(d.lastIndexOf('@') + 1).toLowerCase()));
  const own = /@(sha256:[0-9a-f]{64})$/i.exec(image.name)?.[1];
  if (own) digests.add(own.toLowerCase());
  for (const entry of list) {
    const digest = /(?:^|@)(sha256:[0-9a-f]{64})$/.exec(entry)?.[1];
    if (digest ? digests.has(digest) : entry.toLowerCase() === name) return { allowed: true, entry };
  }
  return { allowed: false };
}

/**
 * The tools of `server` the policy allows, or `undefined` when the policy does not restrict
 * them (no entry for the server, or no `allow_tools`). An empty array allows no tool.
 */
export function allowedTools(policy: Policy, server: string): readonly string[] | undefined {
  return serverEntry(policy, server)?.allow_tools;
}

/** Whether the policy lets `tool` of `server` be exposed at all (see {@link allowedTools}). */
export function isToolAllowed(policy: Policy, server: string, tool: string): boolean {
  const tools = allowedTools(policy, server);
  return tools === undefined || tools.includes(tool);
}

/**
 * The organisation pins of one kind (tools by default, or prompts) for `server` as name →
 * `sha256:` digest, or `undefined` when the policy pins nothing for the server (local pins then
 * apply). When defined, these are the only pins that count and a tool or prompt missing from
 * the map may not be exposed: a server with `pins` but no prompt pin exposes no prompt.
 */
export function orgPins(
  policy: Policy,
  server: string,
  kind: PinKind = 'tool',
): ReadonlyMap<string, string> | undefined {
  const pins = serverEntry(policy, server)?.pins;
  if (!pins) return undefined;
  const map = new Map<string, string>();
  for (const pin of pins) {
    const subject = pinSubject(pin);
    if (subject.kind === kind) map.set(subject.name, pin.digest);
  }
  return map;
}

/** Whether the policy marks `tool` of `server` read-only (the only source the gateway trusts). */
export function isReadOnlyTool(policy: Policy, server: string, tool: string): boolean {
  return serverEntry(policy, server)?.read_only_tools?.includes(tool) ?? false;
}

/**
 * The longest one tool call to `server` may run, in seconds, progress or not; `undefined` when
 * the policy sets no cap (the server entry's own ceiling then holds alone).
 */
export function maxCallSeconds(policy: Policy, server: string): number | undefined {
  return serverEntry(policy, server)?.max_call_seconds;
}

/**
 * What the policy says the gateway does with the definitions of `server` when it has never pinned
 * them: its `mcp[]` entry's `first_sight`, else the policy's, else `pin` (trust on first use). A
 * local `--review-first` may make it stricter, never weaker: the gateway combines them.
 */
export function firstSight(policy: Policy, server: string): FirstSight {
  return serverEntry(policy, server)?.first_sight ?? policy.first_sight ?? 'pin';
}

/** What a server may ask of the client, beyond answering calls. */
export type ServerRequestKind = 'sampling' | 'elicitation';

/**
 * Whether the policy lets `server` send `kind` requests to the client: only a server entry that
 * says so (`allow_sampling`, `allow_elicitation`); a server the policy does not list may not.
 */
export function allowsServerRequest(policy: Policy, server: string, kind: ServerRequestKind): boolean {
  const entry = serverEntry(policy, server);
  return (kind === 'sampling' ? entry?.allow_sampling : entry?.allow_elicitation) === true;
}

/** The most network access a server may be given. */
export type EgressCeiling = { mode: 'deny' } | { mode: 'any' } | { mode: 'allow'; hosts: readonly string[] };

/**
 * The egress ceiling for `server`: its `egress_allow` hosts when the policy lists some, else
 * `default_egress` (deny when absent).
 */
export function egressCeiling(policy: Policy, server: string): EgressCeiling {
  const hosts = serverEntry(policy, server)?.egress_allow;
  // An empty list means no host, as an empty allow_tools means no tool; never "default_egress".
  if (hosts !== undefined) return hosts.length > 0 ? { mode: 'allow', hosts } : { mode: 'deny' };
  return { mode: policy.default_egress ?? 'deny' };
}

/**
 * Whether a requested egress entry (`host` or `host:port`, `*.domain` allowed) fits under the
 * ceiling. Names compare lower-cased without one trailing dot; `*.example.com` in the ceiling
 * covers names below example.com (and narrower wildcards), not example.com itself; an entry with
 * no port in the ceiling covers ports 80 and 443 only, as the proxy does.
 */
export function isEgressWithinCeiling(ceiling: EgressCeiling, requested: string): boolean {
  if (ceiling.mode === 'any') return true;
  if (ceiling.mode === 'deny') return false;
  const want = splitHost(requested);
  return ceiling.hosts.some((entry) => {
    const allowed = splitHost(entry);
    const portsOk =
      allowed.port === undefined
        ? want.port === undefined || want.port === 80 || want.port === 443
        : want.port === allowed.port;
    if (!portsOk) return false;
    if (allowed.host.startsWith('*.')) {
      const suffix = allowed.host.slice(1);
      return want.host.endsWith(suffix) && want.host.length > suffix.length;
    }
    return want.host === allowed.host;
  });
}

function splitHost(entry: string): { host: string; port?: number } {
  const m = /^(.*?)(?::(\d{1,5}))?$/.exec(entry.trim().toLowerCase())!;
  const host = m[1]!.endsWith('.') ? m[1]!.slice(0, -1) : m[1]!;
  return m[2] === undefined ? { host } : { host, port: Number(m[2]) };
}

/**
 * A call as the gateway sees it: a tool call names `tool`, a prompt request (`prompts/get`)
 * names `prompt` instead; its arguments are the prompt's arguments.
 */
export interface CallContext {
  server: string;
  tool?: string;
  prompt?: string;
  /** The calling agent (`ringfence agent add`); absent for the default local client. */
  agent?: string;
  scope?: string;
  arguments?: unknown;
}

/** The decision for a call: which action, which rule decided (null for the default), and why. */
export interface CallDecision {
  action: Action;
  rule: string | null;
  reason: string;
  /**
   * Present when arguments holding invisible characters must be refused, naming the setting that
   * says so: the deciding rule's `refuse_invisible`, or the policy's `refuse_invisible_arguments`.
   * The gateway, which owns what "invisible" means, does the refusing.
   */
  refuseInvisible?: 'rule' | 'policy';
  /**
   * What a secret not bound for the server does to this call, and whose setting says so: the
   * deciding rule's `egress_secrets`, else the policy's. Absent when neither says: `refuse`.
   */
  egressSecrets?: { action: EgressSecrets; from: 'rule' | 'policy' };
}

/** Whose `egress_secrets` applies to a call: the deciding rule's, else the policy's (absent: refuse). */
function egressSecretsSetting(policy: Policy, rule: Rule | undefined): CallDecision['egressSecrets'] {
  if (rule?.egress_secrets !== undefined) return { action: rule.egress_secrets, from: 'rule' };
  if (policy.egress_secrets !== undefined) return { action: policy.egress_secrets, from: 'policy' };
  return undefined;
}

function withEgressSecrets(policy: Policy, rule: Rule | undefined): Pick<CallDecision, 'egressSecrets'> {
  const egressSecrets = egressSecretsSetting(policy, rule);
  return egressSecrets ? { egressSecrets } : {};
}

/** Whose setting refuses invisible characters in this call's arguments, if any: the rule's wins. */
function invisibleSetting(policy: Policy, rule: Rule | undefined): CallDecision['refuseInvisible'] {
  if (rule?.refuse_invisible !== undefined) return rule.refuse_invisible ? 'rule' : undefined;
  return policy.refuse_invisible_arguments === true ? 'policy' : undefined;
}

/**
 * Decides a call: the first rule whose `match` fields all equal the call's and whose `when`
 * conditions all hold wins; otherwise `default_action`. A rule that names an agent or scope
 * never matches a call without one.
 */
export function decideCall(policy: Policy, call: CallContext): CallDecision {
  for (const rule of policy.rules ?? []) {
    if (ruleMatches(rule, call)) {
      const refuseInvisible = invisibleSetting(policy, rule);
      return {
        action: rule.action,
        rule: rule.id,
        reason: rule.reason ?? `rule ${rule.id}`,
        ...(refuseInvisible ? { refuseInvisible } : {}),
        ...withEgressSecrets(policy, rule),
      };
    }
  }
  const refuseInvisible = invisibleSetting(policy, undefined);
  return {
    action: policy.default_action,
    rule: null,
    reason: `default_action of policy ${policy.name}`,
    ...(refuseInvisible ? { refuseInvisible } : {}),
    ...withEgressSecrets(policy, undefined),
  };
}

/** Whether one rule applies to a call (exported for explaining decisions). */
export function ruleMatches(rule: Rule, call: CallContext): boolean {
  const match = rule.match ?? {};
  if (match.server !== undefined && match.server !== call.server) return false;
  if (match.tool !== undefined && match.tool !== call.tool) return false;
  if (match.prompt !== undefined && match.prompt !== call.prompt) return false;
  if (match.agent !== undefined && match.agent !== call.agent) return false;
  if (match.scope !== undefined && match.scope !== call.scope) return false;
  return (rule.when ?? []).every((condition) => conditionHolds(condition, call.arguments));
}

function conditionHolds(condition: Condition, args: unknown): boolean {
  const value = resolvePointer(args, condition.arg);
  if ('exists' in condition) return (value !== MISSING) === condition.exists;
  if (value === MISSING) return false;
  if ('equals' in condition) return sameJson(value, condition.equals);
  if ('in' in condition) return condition.in.some((candidate) => sameJson(value, candidate));
  return typeof value === 'string' && globMatches(condition.glob, value);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  try {
    return canonicalize(a) === canonicalize(b);
  } catch {
    return false;
  }
}
