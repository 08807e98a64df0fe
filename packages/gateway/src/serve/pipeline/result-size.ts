import { canonicalForm, type PrecomputedDigest } from '../../audit/format.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MIB = 1024 * 1024;

/** The bytes a base64 string decodes to, or undefined when it is not strict base64. */
function decodedBytes(text: string): number | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/**
 * The base64 strings of a result's content: image and audio `data`, embedded resource `blob`,
 * and (with `read`) the `blob` of each item of a `resources/read` answer's contents.
 */
function base64Fields(content: unknown, read = false): string[] {
  if (!Array.isArray(content)) return [];
  const fields: string[] = [];
  for (const item of content) {
    if (typeof item !== 'object' || item === null) continue;
    const {
      type,
      data,
      resource,
      blob: own,
    } = item as {
      type?: unknown;
      data?: unknown;
      resource?: unknown;
      blob?: unknown;
    };
    if (read) {
      if (typeof own === 'string') fields.push(own);
      continue;
    }
    if ((type === 'image' || type === 'audio') && typeof data === 'string') fields.push(data);
    const blob = (resource as { blob?: unknown } | null | undefined)?.blob;
    if (type === 'resource' && typeof blob === 'string') fields.push(blob);
  }
  return fields;
}

/**
 * The size a result counts for against its server's cap: its JSON in UTF-8, except that each
 * strict-base64 `data` of image and audio content and `blob` of an embedded resource (in a tool
 * result's content or a prompt's messages) or of a read resource (a `resources/read` answer's
 * contents) counts as
 * the bytes it decodes to. So a 5 MiB image counts 5 MiB, not the 6.7 MiB of its base64; what is
 * not strict base64 counts as it is. `json` is the result's JSON, when the caller has it already.
 */
export function measureResult(
  result: { content?: unknown; messages?: unknown; contents?: unknown },
  json = JSON.stringify(result),
): number {
  let bytes = Buffer.byteLength(json);
  // A prompt's messages carry one content item each, counted as a tool result's content is.
  const promptContent = Array.isArray(result.messages)
    ? result.messages.map((message) => (message as { content?: unknown } | null)?.content)
    : [];
  for (const field of [
    ...base64Fields(result.content),
    ...base64Fields(promptContent),
    ...base64Fields(result.contents, true),
  ]) {
    const decoded = decodedBytes(field);
    // A base64 string has no character JSON escapes: in the JSON it took exactly its length.
    if (decoded !== undefined) bytes -= field.length - decoded;
  }
  return bytes;
}

/**
 * A result's size (as {@link measureResult} counts it) and its audit digest, from one
 * serialisation: its canonical JSON has exactly the bytes of its JSON.stringify (RFC 8785 only
 * orders the keys), so it serves the count and the digest alike. A value with no canonical form
 * (a lone surrogate) is counted from JSON.stringify; one nested too deeply to serialise throws
 * RangeError, as `measureResult` does.
 */
export function measureAndDigest(result: Parameters<typeof measureResult>[0]): {
  size: number;
  digest: PrecomputedDigest;
} {
  const { json, digest } = canonicalForm(result);
  return { size: measureResult(result, json), digest };
}

/** `bytes` for people: exact, and in MiB when that is the easier figure. */
function formatBytes(bytes: number): string {
  return bytes >= MIB ? `${bytes} bytes (${(bytes / MIB).toFixed(1)} MiB)` : `${bytes} bytes`;
}

/**
 * Why a result over its server's cap is withheld: what was counted, and how the cap is raised.
 * `when` says at which point it was counted, when that was not as the server sent it.
 */
export function resultTooLarge(
  request: { entry: { server: string } },
  size: number,
  cap: number,
  when?: string,
): string {
  const { server } = request.entry;
  return `the result counts ${formatBytes(size)}${when ? ` ${when}` : ''}, over the ${formatBytes(cap)} cap for ${server} (counted: its JSON in UTF-8, with the base64 data of images, audio and embedded blobs at their decoded size). A larger cap is set when the server is registered: ringfence mcp rm ${server}, then ringfence mcp add ${server} … --max-result-mb N`;
}
