import type { AuditDigest } from './types.js';

/** What the chain walk keeps of a line that passed its checks. */
export interface ChainFacts {
  readonly seq: number;
  readonly prev: AuditDigest;
  /** An allowed call decision: the call was forwarded, so a result entry should follow. */
  readonly opensCall: boolean;
  /** An `mcp.result`'s parent_seq: the call it closes. */
  readonly closes: number | undefined;
}

/** The fields `chainFacts` reads (an AuditEntry has them; so does the scanner's record of a line). */
interface FactFields {
  readonly type: string;
  readonly seq: number;
  readonly prev: AuditDigest;
  readonly parent_seq?: number;
  readonly refs: object;
}

export function chainFacts(entry: FactFields): ChainFacts {
  const refs = entry.refs as { readonly phase?: unknown; readonly allowed?: unknown };
  return {
    seq: entry.seq,
    prev: entry.prev,
    opensCall: entry.type === 'mcp.decision' && refs.phase === 'call' && refs.allowed === true,
    closes: entry.type === 'mcp.result' ? entry.parent_seq : undefined,
  };
}

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

  see(facts: ChainFacts): void {
    if (facts.opensCall) {
      this.open.add(facts.seq);
    } else if (facts.closes !== undefined) {
      if (!this.open.delete(facts.closes)) this.closedBefore.add(facts.closes);
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
