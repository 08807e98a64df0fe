import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Policy, Rule, VerifiedPolicy } from '@ringfence/policy';
import { AuditLog } from '../../audit/log.js';
import { verifyAuditLog } from '../../audit/verify.js';
import { PinStore } from '../../pins/store.js';
import { policyView } from '../../policy-view/view.js';
import type { SchemaChecks } from '../../ports/schema.js';
import { FakeUpstream, type Received } from '../../ports/__fixtures__/fake-upstream.js';
import { Gateway } from '../gateway.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };

/** What reached a fake server, in order. */
export type Reached = Received;

/**
 * A server offering everything a client may ask of it besides tools: a prompt with arguments, two
 * resources, a template, subscriptions, completions and logging (the shared fake, so scripted).
 */
export class EverythingUpstream extends FakeUpstream {
  constructor(name: string, offers: { completions?: boolean } = {}) {
    const args = [{ name: 'name', required: true }, { name: 'tone' }];
    super(name, {
      tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
      prompts: [{ name: 'greet', description: 'Greets.', arguments: args }],
      resources: ['test://x', 'secret://y'].map((uri) => ({ uri, name: uri })),
      resourceTemplates: [{ uriTemplate: 'test://t/{id}{?page}', name: 't' }],
      limits: { maxResultBytes: 4096 },
      capabilities: { completions: offers.completions !== false, logging: true, subscribe: true },
      readResource: async (uri) => ({ contents: [{ uri, text: 'x' }] }),
      subscribeResource: async () => {},
      complete: async (params, options = {}) => {
        // "hold" is answered only by the client's cancel, as the SDK does: with an error.
        if ((params.argument as { value?: string }).value === 'hold') {
          await new Promise((resolve) => options.signal?.addEventListener('abort', resolve));
          throw new Error('AbortError: This operation was aborted');
        }
        return { completion: { values: ['Ada', 'Alan\u202E'], total: 2 } };
      },
      setLoggingLevel: async () => {},
    });
  }

  /** Every request that reached it but calls and prompt requests, in order. */
  get reached(): readonly Reached[] {
    return this.received.filter((r) => r.method !== 'tools/call' && r.method !== 'prompts/get');
  }
}

/** A signed-policy view of these rules (the policy package's own evaluator decides). */
export function policyOf(rules: Rule[], extra: Partial<Policy> = {}) {
  const policy: Policy = {
    _type: 'ringfence/policy',
    spec_version: 1,
    name: 'test-org',
    version: 1,
    issued_at: '2026-01-01T00:00:00Z',
    expires: '2099-01-01T00:00:00Z',
    default_action: 'allow',
    rules,
    ...extra,
  };
  return policyView({
    policy,
    digest: `sha256:${'1'.repeat(64)}`,
    signers: ['k'],
    expiresAt: Date.parse(policy.expires),
  } as unknown as VerifiedPolicy);
}

/** An audit line as written, parsed. */
export interface Line {
  type: string;
  seq: number;
  parent_seq?: number;
  agent?: string;
  refs: Record<string, unknown>;
}

/** A gateway over these servers, writing a real audit log under a temporary home. */
export async function startGateway(upstreams: EverythingUpstream[], policy = policyOf([])) {
  const home = await mkdtemp(join(tmpdir(), 'rf-methods-'));
  const path = join(home, 'audit.jsonl');
  const audit = await AuditLog.open({ session: 'test', path });
  const logged: string[] = [];
  const gateway = new Gateway({
    servers: upstreams.map((u) => ({ name: u.name, transport: 'http' as const, url: 'https://example.invalid/mcp' })),
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: (config) => upstreams.find((u) => u.name === config.name)!,
    log: (line) => logged.push(line),
    session: 'test',
    policy,
  });
  await gateway.start();
  const allLines = async (): Promise<Line[]> => {
    await audit.close();
    const text = await readFile(path, 'utf8');
    return text.trim().split('\n').map((l) => JSON.parse(l) as Line);
  };
  return {
    gateway,
    logged,
    /** The call decisions and results written so far (expose decisions left out). */
    async lines(): Promise<Line[]> {
      const all = await allLines();
      return all.filter((l) => l.type === 'mcp.result' || (l.type === 'mcp.decision' && l.refs.phase === 'call'));
    },
    /** Every entry written so far; the log is closed first. */
    allLines,
    verify: () => verifyAuditLog(path),
    // The log closed first: a result entry still deferred (or the lock it takes) would otherwise
    // be written into the folder while it is removed.
    done: async () => {
      await gateway.close();
      await audit.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * The invariant of this class: whatever reached a server was preceded by an allowed call decision
 * for that server and method, and every allowed decision has its result entry.
 */
export function everyReachDecided(lines: readonly Line[], upstreams: readonly EverythingUpstream[]): void {
  const allowed = lines.filter((l) => l.type === 'mcp.decision' && l.refs.allowed === true);
  const results = new Set(lines.filter((l) => l.type === 'mcp.result').map((l) => l.parent_seq));
  for (const upstream of upstreams) {
    const reached = upstream.reached.filter((r) => r.method !== 'resources/read');
    const decided = allowed.filter(
      (l) => l.refs.server === upstream.name && l.refs.method !== undefined,
    );
    const count = (method: string, list: readonly { method?: unknown }[]) =>
      list.filter((x) => x.method === method).length;
    for (const method of new Set(reached.map((r) => r.method))) {
      const times = count(method, reached);
      const entries = count(method, decided.map((l) => l.refs));
      if (entries < times)
        throw new Error(`${upstream.name} received ${method} ${times} time(s) with ${entries} allowed decision(s)`);
    }
  }
  for (const decision of allowed) {
    if (!results.has(decision.seq)) throw new Error(`allowed decision #${decision.seq} has no result entry`);
  }
}
