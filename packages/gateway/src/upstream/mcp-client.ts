import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  DEFAULT_TIMEOUTS,
  type PromptListing,
  type ToolListing,
  type UpstreamCapabilities,
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { passThroughJsonSchemaValidator } from '../schema/index.js';

export const MAX_LIST_PAGES = 64;
/** Per listing: tools, or prompts. */
export const MAX_LISTED_TOOLS = 4096;
/** All pages of one listing together, as JSON. */
export const MAX_LISTING_BYTES = 32 * 1024 * 1024;
/** An upstream may say "tools/prompts changed" at most this often; extra notices are folded into one. */
export const LIST_CHANGED_MIN_INTERVAL_MS = 2_000;

// Deliberately loose: the listing is parsed tool by tool, so one malformed tool withholds only
// itself instead of failing the whole page as the SDK's strict schema would.
const LooseListPages = {
  tools: z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() }),
  prompts: z.looseObject({ prompts: z.array(z.unknown()), nextCursor: z.string().optional() }),
};
const LooseResult = z.looseObject({});

export const CLIENT_INFO = { name: 'ringfence-gateway', version: '0.1.0' } as const;

/**
 * An SDK client for one upstream with the gateway's rules: no client capabilities (so sampling,
 * elicitation and roots requests from the server are refused; only ping is answered), no schema
 * compiling inside the SDK, bounded paginated listing, and timeouts on everything.
 */
export class UpstreamClient {
  readonly client: Client;
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private lastChange = 0;
  private changeTimer: NodeJS.Timeout | undefined;

  constructor(readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS) {
    this.client = new Client(CLIENT_INFO, {
      capabilities: {},
      jsonSchemaValidator: passThroughJsonSchemaValidator,
    });
    // Either list changing re-lists both: one folded notice, one re-pin.
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.listChanged());
    this.client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.listChanged());
    this.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) =>
      this.logListener?.(notification.params),
    );
  }

  /** What the server declared at initialisation. */
  capabilities(): UpstreamCapabilities {
    const declared = this.client.getServerCapabilities() ?? {};
    return {
      prompts: declared.prompts !== undefined,
      completions: declared.completions !== undefined,
      logging: declared.logging !== undefined,
    };
  }

  onLog(listener: (params: unknown) => void): void {
    this.logListener = listener;
  }

  async connect(transport: Transport): Promise<void> {
    await this.client.connect(transport, { timeout: this.timeouts.connectMs });
  }

  onListChanged(listener: () => void): void {
    this.changeListener = listener;
  }

  private listChanged(): void {
    if (this.changeTimer) return;
    const wait = Math.max(0, this.lastChange + LIST_CHANGED_MIN_INTERVAL_MS - Date.now());
    this.changeTimer = setTimeout(() => {
      this.changeTimer = undefined;
      this.lastChange = Date.now();
      this.changeListener?.();
    }, wait);
    this.changeTimer.unref();
  }

  async listTools(): Promise<ToolListing> {
    const { items, problems } = await this.listAll('tools');
    return { tools: items, problems };
  }

  async listPrompts(): Promise<PromptListing> {
    const { items, problems } = await this.listAll('prompts');
    return { prompts: items, problems };
  }

  private async listAll(
    what: keyof typeof LooseListPages,
  ): Promise<{ items: unknown[]; problems: string[] }> {
    const items: unknown[] = [];
    const problems: string[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    let bytes = 0;
    for (let page = 0; ; page++) {
      if (page >= MAX_LIST_PAGES) {
        problems.push(`the listing was cut after ${MAX_LIST_PAGES} pages`);
        break;
      }
      const result = (await this.client.request(
        { method: `${what}/list`, params: cursor === undefined ? {} : { cursor } },
        LooseListPages[what],
        { timeout: this.timeouts.listMs },
      )) as { nextCursor?: string } & Record<typeof what, unknown[]>;
      const listed = result[what];
      bytes += JSON.stringify(listed).length;
      if (bytes > MAX_LISTING_BYTES) {
        problems.push(`the listing was cut at ${MAX_LISTING_BYTES} bytes`);
        break;
      }
      items.push(...listed);
      if (items.length > MAX_LISTED_TOOLS) {
        items.length = MAX_LISTED_TOOLS;
        problems.push(`the listing was cut at ${MAX_LISTED_TOOLS} ${what}`);
        break;
      }
      cursor = result.nextCursor;
      if (cursor === undefined) break;
      if (seenCursors.has(cursor)) {
        problems.push('the server repeated a pagination cursor; the listing was stopped there');
        break;
      }
      seenCursors.add(cursor);
    }
    return { items, problems };
  }

  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    return this.client.request({ method: 'tools/call', params: { name, arguments: args } }, LooseResult, {
      timeout: this.timeouts.callMs,
      ...(signal ? { signal } : {}),
    });
  }

  async getPrompt(name: string, args: Record<string, string>, signal?: AbortSignal): Promise<unknown> {
    return this.client.request({ method: 'prompts/get', params: { name, arguments: args } }, LooseResult, {
      timeout: this.timeouts.callMs,
      ...(signal ? { signal } : {}),
    });
  }

  async complete(params: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    return this.client.request({ method: 'completion/complete', params } as never, LooseResult, {
      timeout: this.timeouts.listMs,
      ...(signal ? { signal } : {}),
    });
  }

  async setLoggingLevel(level: string): Promise<void> {
    await this.client.request({ method: 'logging/setLevel', params: { level } } as never, LooseResult, {
      timeout: this.timeouts.listMs,
    });
  }

  async close(): Promise<void> {
    if (this.changeTimer) clearTimeout(this.changeTimer);
    await this.client.close();
  }
}
