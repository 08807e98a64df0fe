/**
 * Which sealed `requestState` values are still usable: each one minted gets an id here, and a
 * retry that presents it takes the id out. A state whose id is not here (used already, expired,
 * or pushed out under load) is refused. Keeping issued ids rather than used ones means every
 * bound fails closed: what is forgotten can no longer be used, never used twice.
 */
import { randomBytes } from 'node:crypto';

/** Ids one principal may hold at once: a person answers a handful of questions, not thousands. */
export const STATES_PER_PRINCIPAL = 256;
/** Ids the process holds at once, over all principals. */
export const STATES_MAX = 16_384;

interface Issued {
  readonly principal: string;
  readonly expiresAt: number;
}

export type Redeemed = 'ok' | 'unknown' | 'other-principal' | 'expired';

export class StateLedger {
  // Insertion order is issue order: the oldest of a principal (or of all) is dropped first.
  private readonly issued = new Map<string, Issued>();
  private readonly perPrincipal = new Map<string, Set<string>>();

  constructor(
    private readonly limits: { perPrincipal: number; max: number } = {
      perPrincipal: STATES_PER_PRINCIPAL,
      max: STATES_MAX,
    },
    private readonly now: () => number = Date.now,
  ) {}

  /** A new id for `principal`, usable once until `expiresAt` (ms since the epoch). */
  issue(principal: string, expiresAt: number): string {
    this.prune();
    const mine = this.perPrincipal.get(principal) ?? new Set<string>();
    this.perPrincipal.set(principal, mine);
    while (mine.size >= this.limits.perPrincipal) this.drop(mine.values().next().value as string);
    while (this.issued.size >= this.limits.max) this.drop(this.issued.keys().next().value as string);
    const id = randomBytes(18).toString('base64url');
    this.issued.set(id, { principal, expiresAt });
    mine.add(id);
    return id;
  }

  /** Take `id` out for `principal`: 'ok' once; a stranger's attempt leaves it for its owner. */
  redeem(id: string, principal: string): Redeemed {
    const entry = this.issued.get(id);
    if (!entry) return 'unknown';
    if (entry.principal !== principal) return 'other-principal';
    this.drop(id);
    return entry.expiresAt < this.now() ? 'expired' : 'ok';
  }

  get size(): number {
    return this.issued.size;
  }

  private drop(id: string): void {
    const entry = this.issued.get(id);
    if (!entry) return;
    this.issued.delete(id);
    const mine = this.perPrincipal.get(entry.principal);
    mine?.delete(id);
    if (mine?.size === 0) this.perPrincipal.delete(entry.principal);
  }

  /** Ids past their expiry. Issued with one TTL, so the map is in expiry order: stop at the first live one. */
  private prune(): void {
    const now = this.now();
    for (const [id, entry] of this.issued) {
      if (entry.expiresAt >= now) return;
      this.drop(id);
    }
  }
}
