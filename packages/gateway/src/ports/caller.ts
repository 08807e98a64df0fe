/** Who is calling: from RINGFENCE_AGENT_TOKEN over stdio or the bearer token over HTTP. */
export interface Caller {
  readonly agent?: string;
  readonly scope?: string;
  /** Ask the person through the client (MCP elicitation); undefined when the client cannot. */
  readonly ask?: (question: string) => Promise<'accept' | 'decline' | 'cancel'>;
}

/** A `tools/call` result as the gateway hands it to the client. */
export interface CallToolResult {
  content: { type: 'text'; text: string }[] | unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}
