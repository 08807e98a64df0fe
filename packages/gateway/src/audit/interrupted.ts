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
  /**
   * Results whose decision was not seen by this walker: when the log is checked in slices, a
   * result may close a decision of an earlier slice (see `joinOpenCalls`).
   */
  private readonly closedBefore = new Set<number>();

  see(entry: AuditEntry): void {
    if (entry.type === 'mcp.decision' && entry.refs.phase === 'call' && entry.refs.allowed) {
      this.open.add(entry.seq);
    } else if (entry.type === 'mcp.result') {
      if (!this.open.delete(entry.parent_seq)) this.closedBefore.add(entry.parent_seq);
    }
  }

  /** What one slice of the log leaves for the slices around it. */
  slice(): OpenCallsSlice {
    return { open: this.seqs(), closedBefore: [...this.closedBefore] };
  }

  /** seqs of the decisions left without a result, ascending. */
  seqs(): number[] {
    return [...this.open].sort((a, b) => a - b);
  }
}

export interface OpenCallsSlice {
  readonly open: readonly number[];
  readonly closedBefore: readonly number[];
}

/**
 * The calls left open by a log checked in consecutive slices: a result always follows its
 * decision, so a slice can only close what the slices before it left open.
 */
export function joinOpenCalls(slices: readonly OpenCallsSlice[]): number[] {
  const open = new Set<number>();
  for (const slice of slices) {
    for (const seq of slice.closedBefore) open.delete(seq);
    for (const seq of slice.open) open.add(seq);
  }
  return [...open].sort((a, b) => a - b);
}
