import {
  type EgressDecision,
  formatCloseLine,
  formatDecisionLine,
  type TunnelClose,
} from '../contract/decision.js';

export type LogSink = (line: string) => void;

export class DecisionLog {
  private readonly sink: LogSink;
  constructor(sink: LogSink) {
    this.sink = sink;
  }

  decision(d: EgressDecision): void {
    this.sink(formatDecisionLine(d, new Date().toISOString()));
  }

  close(c: TunnelClose): void {
    this.sink(formatCloseLine(c, new Date().toISOString()));
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
