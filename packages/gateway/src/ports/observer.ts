/**
 * What watches the gateway without changing it: metrics (`metrics/`) today, traces the same way.
 * The pipeline, the audit log and the container runtime call these hooks; none of them knows who
 * listens. A hook must be cheap, must not throw, and must never hold a call up: it runs inside
 * every forwarded request.
 */

/** A forwarded request as the pipeline starts deciding it. */
export interface ObservedCall {
  /** The MCP method (`tools/call`, `prompts/get`, `resources/read`, …). */
  readonly method: string;
  /** The registered server it goes to (its registration name). */
  readonly server: string;
  /** What it names on that server: a tool or prompt name, a URI, a log level. Server-chosen text. */
  readonly name: string;
  /** The client's W3C trace context, already checked, when it sent one. */
  readonly traceparent?: string;
}

/** The decision the request's `mcp.decision` entry records. */
export interface ObservedDecision {
  readonly allowed: boolean;
  /** The deciding rule, as the audit entry names it (a policy rule, or a check such as `input-schema`). */
  readonly rule: string;
  /** Why a refusal stopped it (the pipeline's refusal code, e.g. `POLICY_DENIED`). */
  readonly code?: string;
  /** Allowed because a person approved it (policy `ask`). */
  readonly asked?: boolean;
}

/**
 * One request's passage, in order: `decided` once, then, when it was allowed, `forwarding` and
 * `answered` around the upstream request, and `ended` when its reply is ready. A request that
 * leaves early (a refusal, a deferred ask) may skip the later hooks: an observation holds nothing
 * that needs closing.
 */
export interface CallObservation {
  decided(decision: ObservedDecision): void;
  forwarding(): void;
  /** The upstream request settled: with the server's answer (`ok`) or with a failure. */
  answered(ok: boolean): void;
  ended(): void;
}

export interface CallObserver {
  begin(call: ObservedCall): CallObservation;
}

/** Several observers as one (metrics and traces both on): each sees every hook, in order. */
export function combineObservers(observers: readonly CallObserver[]): CallObserver | undefined {
  if (observers.length <= 1) return observers[0];
  return {
    begin(call) {
      const each = observers.map((observer) => observer.begin(call));
      return {
        decided: (decision) => {
          for (const o of each) o.decided(decision);
        },
        forwarding: () => {
          for (const o of each) o.forwarding();
        },
        answered: (ok) => {
          for (const o of each) o.answered(ok);
        },
        ended: () => {
          for (const o of each) o.ended();
        },
      };
    },
  };
}

/** What the container runtime reports: contained servers' starts and their sidecars' egress. */
export interface RuntimeObserver {
  containerStarted(server: string): void;
  containerFailed(server: string): void;
  /** One decision of a server's egress proxy (the sidecar's line), allowed or refused. */
  egress(server: string, allowed: boolean): void;
}
