import type { AuditInput } from '../audit/types.js';

/** Where decisions go: the audit log (or a fake in unit tests). */
export interface AuditSink {
  /** Resolves with the entry's seq once it is durable; `defer` lets it share the next write. */
  append(input: AuditInput, options?: { defer?: boolean }): Promise<number>;
}

/** The schema checks the gateway relies on (implemented by the schema guard). */
export interface SchemaChecks {
  prepare(schema: unknown): Promise<{ ok: boolean; code?: string; message?: string }>;
  /** `key` names who the check is for (the server): the worker queue is fair between keys. */
  checkArguments(
    inputSchema: unknown,
    args: unknown,
    options?: { key?: string },
  ): Promise<{ ok: boolean; code?: string; message?: string }>;
  checkResult(
    outputSchema: unknown,
    result: { structuredContent?: unknown; isError?: boolean; content?: unknown },
    options?: { key?: string },
  ): Promise<{ ok: boolean; code?: string; message?: string }>;
}

/** Who is calling: from RINGFENCE_AGENT_TOKEN over stdio or the bearer token over HTTP. */
export interface Caller {
  readonly agent?: string;
  readonly scope?: string;
  /** Ask the person through the client (MCP elicitation); undefined when the client cannot. */
  readonly ask?: (question: string) => Promise<'accept' | 'decline' | 'cancel'>;
}

export interface CallToolResult {
  content: { type: 'text'; text: string }[] | unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}
