/** What the gateway needs from any upstream MCP server, whatever carries it (HTTP, a container). */
export interface Upstream {
  readonly name: string;
  /** Where arguments go, for people: `sandbox mcp-NAME` or `remote HOST`. */
  readonly destination: string;
  /** Connect and initialise; rejects with a message for people. */
  start(): Promise<void>;
  /** Every tool the server lists (all pages), each still untrusted and unparsed. */
  listTools(): Promise<ToolListing>;
  callTool(name: string, args: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
  /** Called (at most once per rate-limit window) when the server says its tools changed. */
  onToolsChanged(listener: () => void): void;
  /** Called once if the connection is lost outside of close(). */
  onClosed(listener: (reason: string) => void): void;
  close(): Promise<void>;
}

export interface ToolListing {
  /** Raw tool objects, in the order the server gave them. */
  readonly tools: readonly unknown[];
  /** Problems with the listing itself (a page cap, a repeated cursor): the listing is partial. */
  readonly problems: readonly string[];
}

export interface UpstreamTimeouts {
  readonly connectMs: number;
  readonly listMs: number;
  readonly callMs: number;
  readonly closeMs: number;
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 20_000,
  listMs: 15_000,
  callMs: 60_000,
  closeMs: 2_000,
};
