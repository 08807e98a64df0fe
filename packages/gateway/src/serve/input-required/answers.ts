import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/core';
import type { ServerRequestMethod } from '../../ports/upstream.js';
import type { ServerRequestKind } from '../server-requests.js';

/**
 * What a client declared it can answer, read from its capabilities: the `_meta` envelope of the
 * request on MCP 2026-07-28, the `initialize` capabilities before. An empty elicitation
 * capability means form, as the spec reads it for older clients; only form is passed on.
 */
export function capableOf(declared: unknown): (kind: ServerRequestKind) => boolean {
  const caps = (typeof declared === 'object' && declared !== null ? declared : {}) as {
    sampling?: unknown;
    elicitation?: { form?: unknown; url?: unknown };
  };
  return (kind) => {
    if (kind === 'sampling') return caps.sampling !== undefined && caps.sampling !== null;
    const elicitation = caps.elicitation;
    if (typeof elicitation !== 'object' || elicitation === null) return false;
    return elicitation.form !== undefined || elicitation.url === undefined;
  };
}

/**
 * A client's answer to one input request, checked for its kind (the SDK does not check
 * `inputResponses`): the answer as the server will get it, or why it is not passed back. The
 * server checks the answer's content against what it asked; the gateway checks its shape.
 */
export function checkedAnswer(
  method: ServerRequestMethod,
  value: unknown,
): { answer: Record<string, unknown> } | { error: string } {
  const schema = method === 'sampling/createMessage' ? CreateMessageResultSchema : ElicitResultSchema;
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    return {
      error: `the client's answer is not ${method === 'sampling/createMessage' ? 'a sampling' : 'an elicitation'} result`,
    };
  return { answer: parsed.data as Record<string, unknown> };
}
