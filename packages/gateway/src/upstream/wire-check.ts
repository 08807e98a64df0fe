import type { JSONRPCResultResponse } from '@modelcontextprotocol/client';
import { z } from 'zod';

/**
 * The common answer, `{"jsonrpc":"2.0","id":…,"result":{…}}`, recognised by hand so it is
 * parsed once (JSON.parse) instead of three times (the transport's message schema, the SDK's
 * dispatch check, the result schema). Only what the SDK's schemas would hand on unchanged takes
 * this path: exactly those three members, an integer or string id, and a result object with no
 * `_meta` (the SDK's schema rewrites a bad `serverInfo` in it) and no own `__proto__` member
 * (a schema's copy drops it). Anything else is undefined here and goes through the SDK's schemas,
 * as before, so what reaches the client is the same either way (`wire-check.test.ts` compares).
 */
export function plainResultResponse(value: unknown): JSONRPCResultResponse | undefined {
  if (!isPlainObject(value)) return undefined;
  const message = value as Record<string, unknown>;
  if (Object.keys(message).length !== 3 || message.jsonrpc !== '2.0') return undefined;
  if (!Object.hasOwn(message, 'jsonrpc') || !Object.hasOwn(message, 'id')) return undefined;
  const id = message.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  if (!Object.hasOwn(message, 'result') || !isPlainResult(message.result)) return undefined;
  if (Object.hasOwn(message.result as object, '_meta')) return undefined;
  return value as JSONRPCResultResponse;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object the loose result schema would copy member for member. */
function isPlainResult(value: unknown): boolean {
  return isPlainObject(value) && !Object.hasOwn(value as object, '__proto__');
}

const zodLooseResult = z.looseObject({});

/**
 * The result schema of forwarded requests: any object (the pipeline checks the result against the
 * pinned tool's output schema and sanitises it next). The same decision as `z.looseObject({})`,
 * without its member-by-member copy of every answer: a plain object is handed on as it is (it was
 * just parsed from the line and nothing else holds it); anything else gets zod's own verdict and
 * words, so a refusal reads as before.
 */
export const LooseResult = {
  '~standard': {
    version: 1,
    vendor: 'ringfence',
    validate: (value: unknown) =>
      isPlainResult(value) ? { value } : zodLooseResult['~standard'].validate(value),
  },
} as unknown as typeof zodLooseResult;
