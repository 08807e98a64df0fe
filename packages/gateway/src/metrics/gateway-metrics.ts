/**
 * The gateway's metrics (docs/operations.md, "Metrics"): what the pipeline, the audit log and the
 * container runtime report through their observer hooks (`ports/observer.ts`), counted in bounded
 * series, and gauges read when scraped. One per `mcp serve` with `--metrics`.
 */
import { performance } from 'node:perf_hooks';
import type {
  CallObservation,
  CallObserver,
  ObservedCall,
  ObservedDecision,
  RuntimeObserver,
} from '../ports/observer.js';
import { Counter, Gauge, Histogram } from './family.js';

/** Caps of distinct values per label (under one parent value): see docs/operations.md. */
export const LIMITS = {
  servers: 64,
  /** Tool, prompt and resource names per server: a server lists what it likes. */
  namesPerServer: 200,
  /** Rules per decision of one name: the organisation's policy names them. */
  rules: 50,
  /** Label values one metric may create in all, beyond which new ones fold into `_other`. */
  budget: 4000,
} as const;

/**
 * A decision as the metric names it: `allow`, `ask_allow` (a person approved), `deny` (a policy
 * rule), `ask_refuse` (a person had to approve and did not, or could not be asked), `unavailable`
 * (the server was not running), `cancelled` (by the client, before forwarding), and `refuse` for
 * every other check (arguments, schema, invisible characters, secrets, task limit).
 */
export function decisionLabel(decision: ObservedDecision): string {
  if (decision.allowed) return decision.asked ? 'ask_allow' : 'allow';
  switch (decision.code) {
    case 'POLICY_DENIED':
      return 'deny';
    case 'ASK_DECLINED':
    case 'ASK_UNSUPPORTED':
    case 'ASK_TOO_LONG':
    case 'ASK_NOT_OFFERED':
      return 'ask_refuse';
    case 'UNAVAILABLE':
      return 'unavailable';
    case 'CANCELLED':
      return 'cancelled';
    default:
      return 'refuse';
  }
}

export interface MetricsSources {
  /** Open client sessions by transport (`stdio`, `http`). */
  sessions?: () => Iterable<{ transport: string; count: number }>;
  /** Definitions withheld from clients now: server, definition kind, why. */
  withheld?: () => Iterable<{ server: string; definition: string; reason: string }>;
}

const ms = 1000;

export class GatewayMetrics implements CallObserver {
  private readonly calls = new Counter({
    name: 'ringfence_calls_total',
    help: 'Forwarded requests decided, by server, name (tool, prompt, URI), decision and deciding rule.',
    labels: [
      ['server', LIMITS.servers],
      ['tool', LIMITS.namesPerServer],
      ['decision', 8],
      ['rule', LIMITS.rules],
    ],
    budget: LIMITS.budget,
  });
  private readonly callSeconds = new Histogram({
    name: 'ringfence_call_duration_seconds',
    help: "Time from a request entering the gateway's checks to its reply being ready, by server and method.",
    labels: [
      ['server', LIMITS.servers],
      ['method', 16],
    ],
  });
  private readonly upstreamSeconds = new Histogram({
    name: 'ringfence_upstream_duration_seconds',
    help: 'Time the server took to answer a forwarded request (or to fail), by server, method and outcome.',
    labels: [
      ['server', LIMITS.servers],
      ['method', 16],
      ['outcome', 4],
    ],
  });
  private readonly auditWriteSeconds = new Histogram({
    name: 'ringfence_audit_write_duration_seconds',
    help: 'Time of one audit log write: the batch written and fdatasync-ed (group commit).',
    labels: [],
  });
  private readonly auditSyncSeconds = new Histogram({
    name: 'ringfence_audit_fdatasync_duration_seconds',
    help: 'Time of the fdatasync of one audit log write.',
    labels: [],
  });
  private readonly auditEntries = new Counter({
    name: 'ringfence_audit_entries_total',
    help: 'Audit entries made durable.',
    labels: [],
  });
  private readonly auditFailures = new Counter({
    name: 'ringfence_audit_write_failures_total',
    help: 'Audit log writes that failed (their calls were refused or their results held back).',
    labels: [],
  });
  private readonly egress = new Counter({
    name: 'ringfence_egress_total',
    help: "Connections a contained server's egress proxy allowed or refused, by server.",
    labels: [
      ['server', LIMITS.servers],
      ['verdict', 4],
    ],
  });
  private readonly containerStarts = new Counter({
    name: 'ringfence_container_starts_total',
    help: 'Contained server starts that succeeded, by server.',
    labels: [['server', LIMITS.servers]],
  });
  private readonly containerFailures = new Counter({
    name: 'ringfence_container_start_failures_total',
    help: 'Contained server starts that failed, by server.',
    labels: [['server', LIMITS.servers]],
  });
  private readonly gauges: Gauge[] = [];
  private readonly folds = [this.calls, this.callSeconds, this.upstreamSeconds, this.egress];

  /** The runtime's hooks (`createContainerRuntime({ observer })`). */
  readonly runtime: RuntimeObserver = {
    containerStarted: (server) => this.containerStarts.inc([server]),
    containerFailed: (server) => this.containerFailures.inc([server]),
    egress: (server, allowed) => this.egress.inc([server, allowed ? 'allowed' : 'refused']),
  };

  /** The audit log's hooks (`AuditLog.open({ timings })`), in milliseconds. */
  readonly audit = {
    written: (elapsedMs: number, syncMs: number, entries: number) => {
      this.auditWriteSeconds.observe([], elapsedMs / ms);
      this.auditSyncSeconds.observe([], syncMs / ms);
      this.auditEntries.inc([], entries);
    },
    failed: () => this.auditFailures.inc([]),
  };

  /** Gauges read at each scrape from what the gateway holds (no cost per call). */
  readFrom(sources: MetricsSources): void {
    if (sources.sessions) {
      const read = sources.sessions;
      this.gauges.push(
        new Gauge(
          {
            name: 'ringfence_sessions',
            help: 'Client sessions open now, by transport.',
            labels: [['transport', 8]],
          },
          () => [...read()].map(({ transport, count }) => ({ labels: [transport], value: count })),
        ),
      );
    }
    if (sources.withheld) {
      const read = sources.withheld;
      this.gauges.push(
        new Gauge(
          {
            name: 'ringfence_withheld_definitions',
            help: 'Definitions withheld from clients now, by server, definition kind and reason.',
            labels: [
              ['server', LIMITS.servers],
              ['definition', 8],
              ['reason', 16],
            ],
          },
          () =>
            [...read()].map(({ server, definition, reason }) => ({
              labels: [server, definition, reason],
              value: 1,
            })),
        ),
      );
    }
  }

  begin(call: ObservedCall): CallObservation {
    return new MeteredCall(this, call);
  }

  /** @internal for MeteredCall: a decision, counted as it is made. */
  counted(call: ObservedCall, decision: ObservedDecision): void {
    this.calls.inc([call.server, call.name, decisionLabel(decision), decision.rule]);
  }

  /** @internal for MeteredCall: a request's times, once its reply is ready. */
  timed(call: ObservedCall, callMs: number, upstream: { ms: number; ok: boolean } | undefined): void {
    if (upstream)
      this.upstreamSeconds.observe(
        [call.server, call.method, upstream.ok ? 'answered' : 'failed'],
        upstream.ms / ms,
      );
    this.callSeconds.observe([call.server, call.method], callMs / ms);
  }

  /** The whole exposition, as served at `/metrics`. */
  render(): string {
    const folded = this.folds.map(
      (family) =>
        `ringfence_metrics_label_values_folded_total{metric="${family.shape.name}"} ${family.budget.folded}`,
    );
    return [
      this.calls.render(),
      this.callSeconds.render(),
      this.upstreamSeconds.render(),
      this.auditWriteSeconds.render(),
      this.auditSyncSeconds.render(),
      this.auditEntries.render(),
      this.auditFailures.render(),
      this.egress.render(),
      this.containerStarts.render(),
      this.containerFailures.render(),
      ...this.gauges.map((gauge) => gauge.render()),
      '# HELP ringfence_metrics_label_values_folded_total Label values that went to "_other" because a cap was reached.\n',
      '# TYPE ringfence_metrics_label_values_folded_total counter\n',
      `${folded.join('\n')}\n`,
    ].join('');
  }
}

/**
 * One request: its decision counted when made, its times observed when its reply is ready (a
 * request that never gets that far, such as an ask deferred to the client's next round, has no time).
 */
class MeteredCall implements CallObservation {
  private readonly start = performance.now();
  private sent = 0;
  private upstream: { ms: number; ok: boolean } | undefined;
  private done = false;

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly call: ObservedCall,
  ) {}

  decided(decision: ObservedDecision): void {
    this.metrics.counted(this.call, decision);
  }
  forwarding(): void {
    this.sent = performance.now();
  }
  answered(ok: boolean): void {
    this.upstream = { ms: performance.now() - this.sent, ok };
  }
  ended(): void {
    if (this.done) return;
    this.done = true;
    this.metrics.timed(this.call, performance.now() - this.start, this.upstream);
  }
}
