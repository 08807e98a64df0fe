import type { AuditDigest, AuditEntry } from '../audit/index.js';
import { redactText, redactUrl } from '../text/index.js';

/**
 * OCSF API Activity (class 6003, category 6 Application Activity), schema 1.1.0, with the
 * security-control profile (action, disposition). One event per audit entry. Only what the entry
 * holds goes out: names, verdicts, rules, reasons (redacted like `audit tail` shows them) and the
 * digests of arguments and results, which the entries hold instead of the values. The entry's
 * seq and hash travel in `metadata.sequence` and `metadata.uid`, so `audit verify --against` can
 * compare an OCSF export with the local log as it can the ringfence form.
 */
export const OCSF_VERSION = '1.1.0';
const CLASS_UID = 6003;
const CATEGORY_UID = 6;

type Activity = { id: number; name: string };
const READ: Activity = { id: 2, name: 'Read' };
const OTHER = (name: string): Activity => ({ id: 99, name });

const STATUS = { success: { id: 1, name: 'Success' }, failure: { id: 2, name: 'Failure' } } as const;
const SEVERITY = { info: { id: 1, name: 'Informational' }, low: { id: 2, name: 'Low' } } as const;

export interface OcsfContext {
  readonly seq: number;
  readonly hash: AuditDigest;
  /** Hash of the log's line 1: names the log the entry belongs to. */
  readonly log: AuditDigest;
  readonly host: string;
  readonly version?: string;
}

/** The MCP request an entry is about, as `api.operation`. */
function operationOf(entry: AuditEntry): string {
  switch (entry.type) {
    case 'mcp.decision':
    case 'mcp.result': {
      const refs = entry.refs;
      if (refs.method) return refs.method;
      if (entry.type === 'mcp.decision' && entry.refs.phase === 'expose')
        return `expose ${refs.kind ?? 'tool'}`;
      if (refs.kind === 'prompt') return 'prompts/get';
      if (refs.kind === 'resource') return 'resources/read';
      return 'tools/call';
    }
    case 'mcp.egress':
      return 'egress connect';
    case 'mcp.server_request':
    case 'mcp.server_answer':
      return entry.refs.method;
    case 'mcp.task':
      return `tasks/${entry.refs.op}`;
    case 'mcp.oauth':
      return `oauth ${entry.refs.event}`;
    case 'gateway.start':
      return 'gateway start';
  }
}

function activityOf(entry: AuditEntry, operation: string): Activity {
  if (operation === 'resources/read' || operation === 'prompts/get' || operation.startsWith('expose '))
    return READ;
  if (entry.type === 'mcp.task' && entry.refs.op === 'cancel') return { id: 4, name: 'Delete' };
  return OTHER(operation === 'tools/call' ? 'Call' : operation);
}

/** allowed / refused, when the entry is a decision; undefined for outcomes and notices. */
function allowedOf(entry: AuditEntry): boolean | undefined {
  switch (entry.type) {
    case 'mcp.decision':
    case 'mcp.egress':
    case 'mcp.server_request':
    case 'mcp.task':
      return entry.refs.allowed;
    default:
      return undefined;
  }
}

function failedOf(entry: AuditEntry): boolean {
  if (entry.type === 'mcp.result' || entry.type === 'mcp.server_answer') return entry.refs.is_error;
  if (entry.type === 'mcp.oauth') return entry.refs.event === 'refused';
  return allowedOf(entry) === false;
}

/** The entry's digests and links, by name: never a value, because the entry holds none. */
function digestsOf(entry: AuditEntry): Record<string, unknown> {
  const refs = entry.refs as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ['arguments', 'result', 'request', 'answer', 'digest', 'token', 'previous']) {
    if (refs[key] !== undefined) out[key] = refs[key];
  }
  return out;
}

function serverOf(entry: AuditEntry): string | undefined {
  const refs = entry.refs as unknown as Record<string, unknown>;
  return typeof refs.server === 'string' ? refs.server : undefined;
}

function resourceOf(entry: AuditEntry): { name: string; type: string } | undefined {
  if (entry.type === 'mcp.egress') return { name: `${entry.refs.host}:${entry.refs.port}`, type: 'host' };
  if (entry.type === 'mcp.decision' || entry.type === 'mcp.result') {
    const kind = entry.refs.kind ?? 'tool';
    // A resource's URI is what the request asked for and may carry a token in its query:
    // redacted as `audit tail` shows it (audit/describe.ts).
    const name = kind === 'resource' || kind === 'template' ? redactUrl(entry.refs.tool) : entry.refs.tool;
    return { name, type: kind };
  }
  if (entry.type === 'mcp.task') return { name: entry.refs.task, type: 'task' };
  return undefined;
}

/** The OCSF event for one audit entry (an object ready for `JSON.stringify`). */
export function ocsfEvent(entry: AuditEntry, context: OcsfContext): Record<string, unknown> {
  const operation = operationOf(entry);
  const activity = activityOf(entry, operation);
  const allowed = allowedOf(entry);
  const failed = failedOf(entry);
  const status = failed ? STATUS.failure : STATUS.success;
  const refs = entry.refs as unknown as Record<string, unknown>;
  const reason = typeof refs.reason === 'string' ? redactText(refs.reason) : undefined;
  const server = serverOf(entry);
  const resource = resourceOf(entry);
  const policy = refs.policy as { name: string; digest: string; signer: string } | undefined;
  const parent = 'parent_seq' in entry ? entry.parent_seq : undefined;
  const rule = typeof refs.rule === 'string' ? refs.rule : undefined;
  const severity = allowed === false || failed ? SEVERITY.low : SEVERITY.info;
  return {
    class_uid: CLASS_UID,
    class_name: 'API Activity',
    category_uid: CATEGORY_UID,
    category_name: 'Application Activity',
    activity_id: activity.id,
    activity_name: activity.name,
    type_uid: CLASS_UID * 100 + activity.id,
    time: Date.parse(entry.ts),
    severity_id: severity.id,
    severity: severity.name,
    status_id: status.id,
    status: status.name,
    ...(reason !== undefined ? { status_detail: reason } : {}),
    ...(allowed !== undefined
      ? {
          action_id: allowed ? 1 : 2,
          action: allowed ? 'Allowed' : 'Denied',
          disposition_id: allowed ? 1 : 2,
          disposition: allowed ? 'Allowed' : 'Blocked',
        }
      : {}),
    metadata: {
      version: OCSF_VERSION,
      profiles: ['security_control'],
      product: {
        name: 'ringfence',
        vendor_name: 'ringfence',
        ...(context.version ? { version: context.version } : {}),
      },
      log_name: 'audit.jsonl',
      uid: context.hash,
      sequence: context.seq,
      original_time: entry.ts,
      correlation_uid: `${entry.session}:${parent ?? context.seq}`,
      event_code: entry.type,
    },
    actor: {
      ...(entry.agent !== undefined
        ? { user: { name: entry.agent, ...(entry.scope ? { groups: [{ name: entry.scope }] } : {}) } }
        : {}),
      session: { uid: entry.session },
      app_name: 'ringfence',
    },
    api: {
      operation,
      ...(server !== undefined ? { service: { name: server } } : {}),
      request: { uid: String(parent ?? context.seq) },
      ...(entry.type === 'mcp.result' || entry.type === 'mcp.server_answer'
        ? {
            response: {
              ...(entry.refs.is_error ? { error: 'error' } : {}),
              ...(reason ? { message: reason } : {}),
            },
          }
        : {}),
    },
    src_endpoint: { hostname: context.host },
    ...(resource ? { resources: [resource] } : {}),
    ...(rule !== undefined || policy
      ? {
          policy: {
            ...(rule !== undefined ? { name: rule } : {}),
            ...(policy ? { uid: policy.digest, desc: `${policy.name} (signer ${policy.signer})` } : {}),
          },
        }
      : {}),
    unmapped: {
      log: context.log,
      prev: entry.prev,
      ...(parent !== undefined ? { parent_seq: parent } : {}),
      ...digestsOf(entry),
    },
  };
}
