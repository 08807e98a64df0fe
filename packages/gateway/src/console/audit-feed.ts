/**
 * The audit log as the console sees it: the most recent entries kept in memory (read backwards
 * from the end, then followed as a gateway appends), each reduced to what the Decisions and
 * Egress views filter and draw, with every string rendered; the last gateway start and what it
 * exposed; and the chain's verification. Nothing here opens the log for writing or takes its
 * lock: the console is read-only.
 */
import { stat } from 'node:fs/promises';
import { type AuditLogLine, followAuditLog, readAuditTail } from '../audit/tail.js';
import type { AuditEntry } from '../audit/types.js';
import { type AuditVerifyResult, verifyAuditLog } from '../audit/verify.js';
import { redactJson, redactText, redactUrl } from '../text/redact.js';
import { renderJsonText, renderUntrusted } from '../text/render.js';
import type { ChainStatus, EntriesPage, ExposedByServer, GatewayRun, ShownEntry } from './api.js';

/** How many of the latest entries the console keeps; older ones are left to `audit tail`. */
export const CONSOLE_ENTRY_LIMIT = 20_000;

const name = (text: string) => renderUntrusted(text, { mode: 'name' }).text;
/** A reason or a line: an older log may hold a reason quoting a URL with its token, so it is redacted. */
const line = (text: string) => renderUntrusted(redactText(text), { mode: 'line' }).text;
/**
 * `prompt greet`, and the request when not the one the kind implies (`prompt greet
 * completion/complete`). A resource's URI (its `tool`) may carry a token: redacted as a URL.
 */
const subjectOf = (refs: { tool: string; kind?: string; method?: string }) =>
  `${refs.kind ? `${name(refs.kind)} ` : ''}${name(refs.kind === 'resource' || refs.kind === 'template' ? redactUrl(refs.tool) : refs.tool)}${refs.method ? ` ${name(refs.method)}` : ''}`;

export function shownEntry(n: number, { raw, entry }: AuditLogLine): ShownEntry {
  let json: string;
  try {
    // Every string leaf redacted: a reason or a resource URI may quote a URL with its token.
    json = renderJsonText(JSON.stringify(redactJson(JSON.parse(raw)), null, 2)).text;
  } catch {
    json = line(raw.length > 4_000 ? `${raw.slice(0, 4_000)}…` : raw);
  }
  if (!entry) return { n, type: '(not an entry of a known shape)', json };
  const base = {
    n,
    seq: entry.seq,
    ts: name(entry.ts),
    type: entry.type,
    session: name(entry.session),
    ...(entry.agent !== undefined ? { agent: name(entry.agent) } : {}),
    ...(entry.scope !== undefined ? { scope: name(entry.scope) } : {}),
    json,
  };
  switch (entry.type) {
    case 'gateway.start':
      return { ...base, reason: line(`gateway pid ${entry.refs.pid} started`) };
    case 'mcp.decision': {
      const r = entry.refs;
      return {
        ...base,
        server: name(r.server),
        subject: subjectOf(r),
        phase: r.phase,
        outcome: r.allowed ? 'allowed' : 'refused',
        rule: name(r.rule),
        ...(r.reason !== undefined ? { reason: line(r.reason) } : {}),
      };
    }
    case 'mcp.result': {
      const r = entry.refs;
      return {
        ...base,
        server: name(r.server),
        subject: subjectOf(r),
        outcome: r.is_error ? 'error' : 'ok',
        parent: entry.parent_seq,
        ...(r.reason !== undefined ? { reason: line(r.reason) } : {}),
      };
    }
    case 'mcp.egress': {
      const r = entry.refs;
      return {
        ...base,
        server: name(r.server),
        outcome: r.allowed ? 'allowed' : 'refused',
        host: name(r.host),
        port: r.port,
        count: r.count ?? 1,
        reason: line(r.reason),
      };
    }
    case 'mcp.server_request': {
      const r = entry.refs;
      return {
        ...base,
        server: name(r.server),
        subject: name(r.method),
        outcome: r.allowed ? 'allowed' : 'refused',
        rule: name(r.rule),
        ...(r.reason !== undefined ? { reason: line(r.reason) } : {}),
      };
    }
    case 'mcp.oauth': {
      const r = entry.refs;
      return {
        ...base,
        server: name(r.server),
        subject: name(`oauth token ${r.event}`),
        outcome: r.event === 'refused' ? 'refused' : 'allowed',
        reason: line(
          [r.token && `token ${r.token}`, r.status !== undefined && `HTTP ${r.status}`, r.reason]
            .filter(Boolean)
            .join(', ') || r.event,
        ),
      };
    }
    case 'mcp.task': {
      const r = entry.refs;
      return {
        ...base,
        ...(r.server !== undefined ? { server: name(r.server) } : {}),
        subject: name(`tasks/${r.op}`),
        outcome: r.allowed ? 'allowed' : 'refused',
        reason: line(r.reason),
      };
    }
    case 'mcp.server_answer': {
      const r = entry.refs;
      return {
        ...base,
        server: name(r.server),
        subject: name(r.method),
        outcome: r.is_error ? 'error' : 'ok',
        parent: entry.parent_seq,
        ...(r.reason !== undefined ? { reason: line(r.reason) } : {}),
      };
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function chainStatus(result: AuditVerifyResult): ChainStatus {
  if (!result.ok)
    return {
      ok: false,
      line: result.line,
      code: result.code,
      message: line(`${result.message}. See: ringfence audit verify`),
    };
  return {
    ok: true,
    entries: result.entries,
    lastHash: result.lastHash,
    message: result.exists
      ? `intact: ${result.entries} entries, every line chained to the one before`
      : 'no audit log yet: nothing has been logged',
  };
}

export class AuditFeed {
  private readonly entries: ShownEntry[] = [];
  private counter = 0;
  private start?: { pid: number; session: string; ts: string; exposure: Map<string, ExposedByServer> };
  private readonly listeners = new Set<() => void>();
  private readonly abort = new AbortController();
  private chainCache?: { key: string; status: ChainStatus };
  private following?: Promise<void>;
  /** What the page should say about following the log (it was replaced, or following stopped). */
  private notice?: string;

  constructor(readonly path: string) {}

  async open(): Promise<void> {
    const tail = await readAuditTail(this.path, { count: CONSOLE_ENTRY_LIMIT });
    for (const l of tail.lines) this.add(l);
    this.following = followAuditLog(this.path, {
      from: tail.position,
      signal: this.abort.signal,
      intervalMs: 500,
      onLine: (l) => {
        this.add(l);
        for (const listener of this.listeners) listener();
      },
      onNotice: (message) => {
        this.notice = renderUntrusted(message, { mode: 'line' }).text;
      },
    }).catch((error: unknown) => {
      this.notice = renderUntrusted(
        `live updates stopped: ${(error as Error).message}. Restart ringfence console; check the log with: ringfence audit verify`,
        { mode: 'line' },
      ).text;
      for (const listener of this.listeners) listener();
    });
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.following;
  }

  /** Called after new entries arrive; returns the function that stops listening. */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Entries after feed position `after`, oldest first, at most `limit`. */
  since(after: number, limit = 5_000): EntriesPage {
    const first = this.entries[0]?.n ?? this.counter + 1;
    const from = Math.max(0, after + 1 - first);
    return {
      entries: this.entries.slice(from, from + limit),
      last: this.counter,
      ...(this.notice ? { notice: this.notice } : {}),
    };
  }

  get run(): GatewayRun | undefined {
    if (!this.start) return undefined;
    return { ...this.start, alive: isAlive(this.start.pid) };
  }

  private add(l: AuditLogLine): void {
    this.counter += 1;
    this.entries.push(shownEntry(this.counter, l));
    if (this.entries.length > CONSOLE_ENTRY_LIMIT)
      this.entries.splice(0, this.entries.length - CONSOLE_ENTRY_LIMIT);
    this.track(l.entry);
  }

  /** Follows the latest gateway start and, per server, the last expose decision of each definition. */
  private track(entry: AuditEntry | undefined): void {
    if (entry?.type === 'gateway.start') {
      this.start = { pid: entry.refs.pid, session: entry.session, ts: entry.ts, exposure: new Map() };
      return;
    }
    if (entry?.type !== 'mcp.decision' || entry.refs.phase !== 'expose') return;
    if (!this.start || entry.session !== this.start.session) return;
    const r = entry.refs;
    const label = r.kind ? `${r.kind} ${r.tool}` : r.tool;
    const server = this.start.exposure.get(r.server) ?? { exposed: [], withheld: [] };
    server.exposed.splice(0, server.exposed.length, ...server.exposed.filter((n) => n !== label));
    server.withheld.splice(0, server.withheld.length, ...server.withheld.filter((w) => w.name !== label));
    if (r.allowed) server.exposed.push(label);
    else
      server.withheld.push({
        name: label,
        rule: r.rule,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
      });
    this.start.exposure.set(r.server, server);
  }

  /**
   * The chain as `audit verify` checks it, redone only when the file changed. Read without the
   * writers' lock, a line being appended looks torn: such a verdict is checked once more before
   * it is shown.
   */
  async chain(): Promise<ChainStatus> {
    const info = await stat(this.path).catch(() => undefined);
    const key = info ? `${info.ino}:${info.size}:${info.mtimeMs}` : 'absent';
    if (this.chainCache?.key === key) return this.chainCache.status;
    let result = await verifyAuditLog(this.path, { lock: false });
    if (!result.ok && result.code === 'AUDIT_TORN_LINE') {
      await new Promise((resolve) => setTimeout(resolve, 300));
      result = await verifyAuditLog(this.path, { lock: false });
    }
    const status = chainStatus(result);
    this.chainCache = { key, status };
    return status;
  }
}
