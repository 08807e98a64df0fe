import type { AuditEntry } from './types.js';

/**
 * Calls that were forwarded but have no result entry: an allowed `call` decision is made durable
 * before forwarding, and its `mcp.result` (which names it by `parent_seq`) follows the reply. A
 * decision still without a result at the end of the log belongs to a call that was in flight when
 * its gateway stopped (kill -9, power loss) or whose result could not be written, or to one that
 * is still running now. Fed every entry in log order; memory is bounded by the calls left open.
 */
export class OpenCalls {
  private readonly open = new Set<number>();

  see(entry: AuditEntry): void {
    if (entry.type === 'mcp.decision' && entry.refs.phase === 'call' && entry.refs.allowed) {
      this.open.add(entry.seq);
    } else if (entry.type === 'mcp.result') {
      this.open.delete(entry.parent_seq);
    }
  }

  /** seqs of the decisions left without a result, ascending. */
  seqs(): number[] {
    return [...this.open].sort((a, b) => a - b);
  }
}
