import type { Client, McpSubscription } from '@modelcontextprotocol/client';
import { GatewayError } from '../errors.js';

/** Attempts in a row to reopen a listen stream that brought nothing before giving up. */
const MAX_RELISTENS = 5;
const RELISTEN_DELAY_MS = 1_000;
/** A stream open this long before it dropped was working: the count of attempts starts over. */
const STABLE_MS = 10_000;

/**
 * A modern (2026-07-28) upstream sends nothing unasked: list changes and resource updates come
 * only on a `subscriptions/listen` stream the client holds open. This keeps one open for the
 * whole connection (so a tool changing under its pin is still seen: rug-pull detection does not
 * depend on the era), with the resource URIs the gateway subscribed to. A stream the server drops
 * is reopened, and a re-list is asked for, since a change may have been missed meanwhile; a new set
 * of URIs opens the new stream before closing the old one, so there is no gap.
 */
export class ListenStream {
  private current: McpSubscription | undefined;
  private readonly uris = new Set<string>();
  private failures = 0;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Client,
    private readonly timeoutMs: number,
    /** A change may have been missed (the stream was reopened): list everything again. */
    private readonly missed: () => void,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Open the first stream; resolves once the server acknowledged it. */
  open(): Promise<void> {
    return this.replace();
  }

  /** `resources/subscribe` and `resources/unsubscribe` on a modern server: a new filter. */
  async subscribe(uri: string, subscribe: boolean): Promise<void> {
    if (subscribe === this.uris.has(uri)) return;
    if (subscribe) this.uris.add(uri);
    else this.uris.delete(uri);
    await this.replace();
  }

  private async replace(): Promise<void> {
    if (this.closed) return;
    const previous = this.current;
    const next = await this.client.listen(
      {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        ...(this.uris.size > 0 ? { resourceSubscriptions: [...this.uris] } : {}),
      },
      { timeout: this.timeoutMs },
    );
    if (this.closed) {
      await next.close().catch(() => {});
      return;
    }
    this.current = next;
    const openedAt = Date.now();
    void next.closed.then((how) => {
      if (how !== 'remote' || this.current !== next || this.closed) return;
      // Only a stream that stayed a while counts as a success: one dropped at once, again and
      // again, ends the retries rather than reopening for ever.
      if (Date.now() - openedAt >= STABLE_MS) this.failures = 0;
      this.reopen();
    });
    await previous?.close().catch(() => {});
  }

  private reopen(): void {
    if (this.failures >= MAX_RELISTENS) {
      this.onError(
        new GatewayError(
          'CLOSED_EARLY',
          `the server's listen stream could not be reopened (${this.failures} attempts)`,
        ),
      );
      return;
    }
    this.failures++;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.replace().then(this.missed, (error: unknown) => {
        this.onError(error as Error);
        this.reopen();
      });
    }, RELISTEN_DELAY_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current?.close().catch(() => {});
  }
}
