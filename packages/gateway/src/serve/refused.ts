/**
 * The text of a pipeline refusal (an error result), or undefined for an answer. A method with no
 * error result of its own (a prompt, a read, a completion, a subscription) sends that text as a
 * JSON-RPC error instead.
 */
export function refusedText(reply: unknown): string | undefined {
  const result = reply as { isError?: unknown; content?: { text?: unknown }[] } | undefined;
  if (result?.isError !== true) return undefined;
  const text = result.content?.[0]?.text;
  return typeof text === 'string' ? text : 'ringfence refused it';
}
