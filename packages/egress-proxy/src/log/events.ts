/**
 * The two stdout line shapes of DESIGN.md section 7. The gateway parses these lines, so the field
 * set is fixed: nothing is added here without changing the contract.
 */
export interface EgressDecision {
  readonly method: string;
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  readonly reason: string;
  readonly address?: string;
  readonly status: number;
}

export interface TunnelClose {
  readonly host: string;
  readonly port: number;
  readonly bytes_in: number;
  readonly bytes_out: number;
  readonly duration_ms: number;
}

export type LogSink = (line: string) => void;

export class DecisionLog {
  private readonly sink: LogSink;
  constructor(sink: LogSink) {
    this.sink = sink;
  }

  decision(d: EgressDecision): void {
    const line: Record<string, unknown> = {
      ts: new Date().toISOString(),
      event: 'egress',
      method: d.method,
      host: d.host,
      port: d.port,
      allowed: d.allowed,
      reason: d.reason,
    };
    if (d.address !== undefined) line['address'] = d.address;
    line['status'] = d.status;
    this.sink(`${JSON.stringify(line)}\n`);
  }

  close(c: TunnelClose): void {
    this.sink(
      `${JSON.stringify({
        ts: new Date().toISOString(),
        event: 'close',
        host: c.host,
        port: c.port,
        bytes_in: c.bytes_in,
        bytes_out: c.bytes_out,
        duration_ms: c.duration_ms,
      })}\n`,
    );
  }
}

/**
 * A stdout sink that never throws and batches: lines written in one turn of the event loop go
 * out in one write (a busy proxy otherwise spends a syscall per line on a synchronous pipe).
 * EPIPE (the gateway went away) is ignored here because `--lifeline` is what ends the process.
 */
export function stdoutSink(): LogSink {
  process.stdout.on('error', () => {});
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    process.stdout.write(text);
  };
  process.once('exit', flush);
  return (line) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(line);
  };
}
