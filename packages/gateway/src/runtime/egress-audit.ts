import { parseDecisionLine } from '@ringfence/egress-proxy/contract';
import { type EgressInput, egressInputFromDecision } from '../audit/egress.js';

/**
 * Turns a sidecar's decision lines into `mcp.egress` audit entries without letting a server
 * flood the log: the first attempt of a kind (server, host, port, verdict, reason, status) is
 * written at once, repeats within the window are counted and written as one entry with `count`
 * when the window closes. Nothing is dropped; thousands of identical refusals cost one line.
 */
export class EgressAuditor {
  private readonly pending = new Map<string, { input: EgressInput; count: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (input: EgressInput) => void,
    private readonly windowMs = 1000,
    /** Told every decision, folded or not (`mcp serve --metrics` counts them). */
    private readonly observe?: (server: string, allowed: boolean) => void,
  ) {}

  line(server: string, line: string): void {
    const decision = parseDecisionLine(line);
    if (!decision) return;
    const input = egressInputFromDecision(server, decision);
    const { refs } = input;
    this.observe?.(refs.server, refs.allowed);
    const key = JSON.stringify([
      refs.server,
      refs.host,
      refs.port,
      refs.allowed,
      refs.reason,
      refs.status ?? null,
    ]);
    const seen = this.pending.get(key);
    if (seen) {
      seen.count += 1;
      return;
    }
    this.pending.set(key, { input, count: 0 });
    this.write(input);
    this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    // The gateway flushes on shutdown; the window alone must not keep a finished process alive.
    this.timer.unref();
  }

  /** Write the folded repeats now (at the end of a window, and when the server stops). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const { input, count } of this.pending.values()) {
      if (count > 0) this.write({ ...input, refs: { ...input.refs, count } });
    }
    this.pending.clear();
  }
}
