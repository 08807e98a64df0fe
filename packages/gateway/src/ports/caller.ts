import { RingfenceError } from '../errors.js';

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

/**
 * Thrown by an `ask` that cannot wait for the answer in this request (an MCP 2026 client answers
 * by retrying the request): the pipeline lets it through unanswered, nothing is decided or
 * forwarded, and the endpoint sends the question back instead (`serve/ask-modern.ts`).
 */
export class AskDeferred extends RingfenceError<'ASK_DEFERRED'> {
  constructor(readonly question: string) {
    super('ASK_DEFERRED', 'the person is asked through the client; the request is retried with the answer');
  }
}
