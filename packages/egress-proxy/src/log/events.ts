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

  // Lines are assembled by hand in the contract's field order: this runs once or twice per
  // request, and JSON.stringify of a fresh object costs more. Strings still go through
  // JSON.stringify, so a hostile host or method cannot break out of its field.
  decision(d: EgressDecision): void {
    this.sink(
      `{"ts":"${new Date().toISOString()}","event":"egress","method":${JSON.stringify(d.method)},` +
        `"host":${JSON.stringify(d.host)},"port":${d.port},"allowed":${d.allowed},` +
        `"reason":${JSON.stringify(d.reason)},` +
        (d.address !== undefined ? `"address":${JSON.stringify(d.address)},` : '') +
        `"status":${d.status}}\n`,
    );
  }

  close(c: TunnelClose): void {
    this.sink(
      `{"ts":"${new Date().toISOString()}","event":"close","host":${JSON.stringify(c.host)},"port":${c.port},` +
        `"bytes_in":${c.bytes_in},"bytes_out":${c.bytes_out},"duration_ms":${c.duration_ms}}\n`,
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
