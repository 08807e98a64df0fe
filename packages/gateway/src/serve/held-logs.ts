import type { ServerConfig } from '../config/servers.js';
import type { PolicyView } from '../ports/policy.js';
import type { ServerCatalog } from './catalog.js';
import type { LogRelay } from './log-relay.js';
import { firstSightOf } from './withheld.js';

/**
 * A server's log messages on their way to clients: relayed (rate-limited, by `LogRelay`) unless
 * the server awaits its first review, when nothing of it may reach a client and they are dropped
 * and counted. Before a server's listing is known, one that first sight would withhold counts as
 * held; what it sent meanwhile is settled once the listing says (`listed`).
 */
export class HeldLogs {
  /** Log messages dropped per server held at first sight. */
  private readonly dropped = new Map<string, number>();
  /** Log messages that came before a server's listing said whether it is held. */
  private readonly early = new Map<string, number>();

  constructor(
    private readonly deps: {
      readonly policy: PolicyView;
      readonly relay: LogRelay;
      readonly catalogOf: (server: string) => ServerCatalog | undefined;
      readonly log: (line: string) => void;
    },
  ) {}

  /** One log message of `config`'s server: relayed, or dropped and counted while it is held. */
  message(config: ServerConfig, params: unknown): void {
    const catalog = this.deps.catalogOf(config.name);
    if (!this.held(config)) this.deps.relay.relay(config.name, params);
    else if (catalog) this.drop(config.name, 1);
    else this.early.set(config.name, (this.early.get(config.name) ?? 0) + 1);
  }

  /** Whether nothing of `config`'s server may reach a client (see the class comment). */
  held(config: ServerConfig): boolean {
    const catalog = this.deps.catalogOf(config.name);
    if (catalog) return catalog.awaitingReview;
    return firstSightOf(this.deps.policy, config.name, config.review_first === true).mode === 'withhold';
  }

  /** The server's listing is known: what it logged before is dropped (held) or said to be lost. */
  listed(config: ServerConfig, catalog: ServerCatalog): void {
    const early = this.early.get(config.name) ?? 0;
    this.early.delete(config.name);
    if (early > 0 && catalog.awaitingReview) this.drop(config.name, early);
    else if (early > 0)
      this.deps.log(
        `ringfence: ${config.name}: dropped ${early} log message(s) it sent while starting, before its listing showed it is not awaiting a first review; later ones are relayed.`,
      );
  }

  /** Count a held server's dropped log messages; the first drop of a start is said on stderr. */
  private drop(name: string, count: number): void {
    const before = this.dropped.get(name) ?? 0;
    this.dropped.set(name, before + count);
    if (before === 0)
      this.deps.log(
        `ringfence: ${name} awaits its first review, so its log messages are dropped, not relayed to clients (how many is said when the gateway stops). Read its definitions with: ringfence mcp pins show ${name}, then approve at a terminal with: ringfence mcp pins approve ${name}`,
      );
  }

  /** At stop: how many each held server's were, with what to do. */
  close(): void {
    for (const [name, count] of this.dropped)
      this.deps.log(
        `ringfence: ${name}: dropped ${count} log message(s) while it awaited its first review. Review it with: ringfence mcp pins show ${name}`,
      );
    this.dropped.clear();
  }
}
