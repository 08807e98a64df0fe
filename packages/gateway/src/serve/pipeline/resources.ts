import { measureAndDigest, resultTooLarge } from './result-size.js';
import { type ResultOutcome, resultCap, withheld } from './results.js';
import { isPlainObject } from './steps.js';
import type { PipelineDeps, ReadResult, ResourceReadRequest } from './types.js';

/**
 * A `resources/read` answer: an object with a `contents` list, each item an object with a string
 * `uri` and exactly one of a string `text` and a string `blob`, and no bigger than the result cap
 * (a blob counted at its decoded size, as an image is). What passes is still the server's object:
 * `sanitise` rebuilds it next. On a refusal the read did reach the server; `refused` says why.
 */
export function checkReadResult(
  deps: PipelineDeps,
  request: ResourceReadRequest,
  result: unknown,
): ResultOutcome<ReadResult> {
  const refuse = (why: string) => withheld(request, why);
  if (!isPlainObject(result) || !Array.isArray(result.contents))
    return refuse('the server sent a malformed read result (no contents list)');
  for (const [index, item] of result.contents.entries()) {
    if (!isPlainObject(item) || typeof item.uri !== 'string')
      return refuse(`contents[${index}] is not an object with a string uri`);
    const text = Object.hasOwn(item, 'text');
    if (text === Object.hasOwn(item, 'blob'))
      return refuse(`contents[${index}] must carry exactly one of text and blob`);
    if (typeof (text ? item.text : item.blob) !== 'string')
      return refuse(`contents[${index}].${text ? 'text' : 'blob'} is not a string`);
  }
  let measured: ReturnType<typeof measureAndDigest>;
  try {
    measured = measureAndDigest(result);
  } catch {
    return refuse('the server sent a result nested too deeply to check');
  }
  const { size, digest } = measured;
  const cap = resultCap(deps, request);
  if (size > cap) return { ...refuse(resultTooLarge(request, size, cap)), digest };
  return { reply: result as ReadResult, digest };
}
