/** A schema check's answer: ok, or the refusal code and a message for people. */
export interface SchemaAnswer {
  ok: boolean;
  code?: string;
  message?: string;
}

/** The schema checks the gateway relies on (implemented by the schema guard, `schema/guard.ts`). */
export interface SchemaChecks {
  prepare(schema: unknown): Promise<SchemaAnswer>;
  /** `key` names who the check is for (the server): the worker queue is fair between keys. */
  checkArguments(inputSchema: unknown, args: unknown, options?: { key?: string }): Promise<SchemaAnswer>;
  checkResult(
    outputSchema: unknown,
    result: { structuredContent?: unknown; isError?: boolean; content?: unknown },
    options?: { key?: string },
  ): Promise<SchemaAnswer>;
}
