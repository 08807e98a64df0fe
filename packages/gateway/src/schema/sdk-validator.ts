/**
 * A validator for the MCP SDK client that never compiles anything.
 *
 * The SDK's client compiles every tool's `outputSchema` with its own ajv as soon as
 * `tools/list` returns, on the event loop, with JavaScript regular expressions and no caps: one
 * hostile schema could stall or crash the gateway before the guard has even looked at it. The
 * gateway gives the client this validator instead and runs the real check itself, in
 * `SchemaGuard.checkResult`, off the event loop and against the pinned schema.
 */
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';

export const passThroughJsonSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(_schema: JsonSchemaType): JsonSchemaValidator<T> {
    return (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};
