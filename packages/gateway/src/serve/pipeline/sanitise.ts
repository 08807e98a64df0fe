import { canonicalize } from '@ringfence/policy';
import type { CallToolResult } from '../../ports/caller.js';
import { printable } from '../../text/printable.js';
import { checkIcons } from '../icons.js';
import { allowedNames, inertMimeType, type MediaKind, mediaProblem } from '../media.js';
import { agreesWithText } from './structured.js';
import type { PromptResult, ReadResult } from './types.js';

/**
 * The result sanitiser: a `CallToolResult` is rebuilt from what the MCP specification defines for
 * the protocol version negotiated with the client, never copied. Anything else a server sends
 * (`_meta` at any level, unknown members, content types the client's version lacks) is dropped and
 * counted; a defined member of the wrong type makes the whole result malformed. Every URI a
 * server puts in a result (a resource link, an embedded resource, a read resource) is replaced by
 * its URI in the gateway's namespace (`resource-uri.ts`): a client that follows it reads it
 * through the gateway, from that server alone, never from its own host (a `file:` URI names a
 * path on the server's side, inside its container).
 *
 * Versions are the spec's dated names (`YYYY-MM-DD`), so their order is their string order.
 */

export const OLDEST_VERSION = '2024-11-05';
const AUDIO_SINCE = '2025-03-26';
const V2025_06 = '2025-06-18';
const V2025_11 = '2025-11-25';

/** The version whose members apply: a client that never said one gets the oldest, smallest set. */
export function effectiveVersion(negotiated: string | undefined): string {
  return typeof negotiated === 'string' &&
    /^\d{4}-\d{2}-\d{2}$/.test(negotiated) &&
    negotiated > OLDEST_VERSION
    ? negotiated
    : OLDEST_VERSION;
}

type Checked = { readonly value: unknown; readonly dropped: number } | { readonly problem: string };
type Check = (value: unknown, at: string, version: string) => Checked;
interface Member {
  readonly check: Check;
  readonly required?: boolean;
  /** The first version that defines the member; before it the member is dropped like an unknown one. */
  readonly since?: string;
}
type Spec = Readonly<Record<string, Member>>;

const ok = (value: unknown, dropped = 0): Checked => ({ value, dropped });
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const string: Check = (v, at) => (typeof v === 'string' ? ok(v) : { problem: `${at} must be a string` });

/** The SDK's own test (`atob`), so nothing passed here fails the client's base64 check. */
const base64: Check = (v, at) => {
  if (typeof v !== 'string') return { problem: `${at} must be a base64 string` };
  try {
    atob(v);
    return ok(v);
  } catch {
    return { problem: `${at} must be base64` };
  }
};

const unitNumber: Check = (v, at) =>
  typeof v === 'number' && v >= 0 && v <= 1 ? ok(v) : { problem: `${at} must be a number from 0 to 1` };

const size: Check = (v, at) =>
  Number.isSafeInteger(v) && (v as number) >= 0
    ? ok(v)
    : { problem: `${at} must be a whole number of bytes` };

const audience: Check = (v, at) =>
  Array.isArray(v) && v.every((role) => role === 'user' || role === 'assistant')
    ? ok([...v])
    : { problem: `${at} must be a list of "user" and "assistant"` };

const ISO_TIME =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
/** ISO 8601 with seconds and an offset, a real calendar day: what the client's SDK accepts. */
const isoTime: Check = (v, at) => {
  const m = typeof v === 'string' ? ISO_TIME.exec(v) : null;
  const day = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).getUTCDate() : 0;
  return m && day === Number(m[3]) ? ok(v) : { problem: `${at} must be an ISO 8601 time with an offset` };
};

/**
 * Copies only the members `spec` defines for `version`, each checked; every other own member is
 * counted as dropped. Keys written come from `spec`, never from the source, so a member named
 * `__proto__` or `constructor` is just another unknown member.
 */
function pick(source: unknown, spec: Spec, at: string, version: string): Checked {
  if (!isObject(source)) return { problem: `${at} must be an object` };
  const out: Record<string, unknown> = {};
  let dropped = 0;
  for (const key of Object.keys(source)) {
    const member = Object.hasOwn(spec, key) ? spec[key] : undefined;
    if (!member || (member.since !== undefined && version < member.since)) {
      dropped += 1;
      continue;
    }
    const checked = member.check(source[key], `${at}.${key}`, version);
    if ('problem' in checked) return checked;
    out[key] = checked.value;
    dropped += checked.dropped;
  }
  for (const [key, member] of Object.entries(spec)) {
    if (member.required && !Object.hasOwn(out, key)) return { problem: `${at} has no ${key}` };
  }
  return ok(out, dropped);
}

const nested =
  (spec: Spec): Check =>
  (v, at, version) =>
    pick(v, spec, at, version);

const ANNOTATIONS: Spec = {
  audience: { check: audience },
  priority: { check: unitNumber },
  lastModified: { check: isoTime, since: V2025_06 },
};
const annotations: Member = { check: nested(ANNOTATIONS) };

const RESOURCE_CONTENTS: Spec = {
  uri: { check: string, required: true },
  mimeType: { check: string },
  text: { check: string },
  blob: { check: base64 },
};

/** Only icons a client draws without fetching anything (`icons.ts`); the others are dropped and counted. */
const icons: Check = (v, at) => {
  const checked = checkIcons(v, at);
  return 'problem' in checked ? checked : ok(checked.icons, checked.dropped);
};

/** `type` was read to choose the spec, so it is already what the spec is for. */
const TYPE: Member = { check: (v) => ok(v), required: true };
const MEDIA: Spec = {
  type: TYPE,
  data: { check: base64, required: true },
  mimeType: { check: string, required: true },
  annotations,
};

/** The content types of a tool result, and the first version that defines each. */
const CONTENT: Readonly<Record<string, { readonly since?: string; readonly spec: Spec }>> = {
  text: { spec: { type: TYPE, text: { check: string, required: true }, annotations } },
  image: { spec: MEDIA },
  audio: { since: AUDIO_SINCE, spec: MEDIA },
  resource_link: {
    since: V2025_06,
    spec: {
      type: TYPE,
      uri: { check: string, required: true },
      name: { check: string, required: true },
      title: { check: string },
      description: { check: string },
      mimeType: { check: string },
      size: { check: size },
      annotations,
      icons: { check: icons, since: V2025_11 },
    },
  },
  resource: {
    spec: {
      type: TYPE,
      resource: { check: nested(RESOURCE_CONTENTS), required: true },
      annotations,
    },
  },
};

const quoted = (text: string, max: number) =>
  JSON.stringify(printable(text.length > max ? `${text.slice(0, max)}…` : text));

export type Sanitised =
  | { readonly ok: true; readonly reply: CallToolResult; readonly dropped: number }
  | { readonly ok: false; readonly problem: string };

/**
 * How an answer that passed its checks is rebuilt for the client's protocol version: one of
 * `sanitiseResult`, `sanitisePrompt`, `sanitiseRead`, chosen by method (`method-steps.ts`).
 */
export type Rebuild = (
  reply: Record<string, unknown>,
  context: SanitiseContext,
) => Sanitised | SanitisedPrompt | SanitisedRead;

export interface SanitiseContext {
  /** The version negotiated with the client; undefined when it never initialised. */
  readonly protocolVersion: string | undefined;
  readonly server: string;
  /** SERVER/TOOL (or SERVER/prompt NAME), for the text that names what was dropped. */
  readonly label: string;
  /** The URI the client is shown for one the server sent (and may then read through the gateway). */
  readonly linkUri: (uri: string) => string;
  /**
   * Whether a pinned output schema checked the result's `structuredContent`. Without one (the
   * default), it passes only when a text item says the same (`structured.ts`); with one, it
   * passes, and when no text item says the same the gateway adds one that does.
   */
  readonly structuredChecked?: boolean;
}

/**
 * Rebuilds a result that passed the shape, size and output-schema checks. `structuredContent` is
 * passed as the very object the output schema checked; from a tool without an output schema,
 * only when a text item of the result is its JSON (`agreesWithText`). It is dropped before
 * 2025-06-18, on an error result (never checked), and, without an output schema, when it does
 * not agree. With an output schema (a client requires structuredContent from such a tool) one
 * that no text item agrees with still passes, and the gateway adds a text item holding its
 * canonical JSON (RFC 8785, compact) at the end of `content`: whoever reads `content` reads the
 * same data a model may read from `structuredContent`. The added item counts as one in `dropped`
 * (the content list is not what the server sent).
 */
export function sanitiseResult(result: Record<string, unknown>, context: SanitiseContext): Sanitised {
  const version = effectiveVersion(context.protocolVersion);
  const own = (key: string) => (Object.hasOwn(result, key) ? result[key] : undefined);
  const isError = own('isError');
  const structured = own('structuredContent');
  if (isError !== undefined && typeof isError !== 'boolean')
    return { ok: false, problem: 'isError must be true or false' };
  if (structured !== undefined && !isObject(structured))
    return { ok: false, problem: 'structuredContent must be an object' };
  let dropped = 0;
  for (const key of Object.keys(result)) {
    if (key !== 'content' && key !== 'isError' && key !== 'structuredContent') dropped += 1;
  }
  const reply: CallToolResult = { content: [] };
  if (isError !== undefined) reply.isError = isError;

  const source = own('content');
  if (!Array.isArray(source)) return { ok: false, problem: 'the result has no content list' };
  const content = sanitiseContent(source, (index) => `content[${index}]`, version, context);
  if ('problem' in content) return { ok: false, problem: content.problem };
  reply.content = content.value as CallToolResult['content'];
  if (structured !== undefined) {
    const defined = version >= V2025_06 && isError !== true;
    const shown =
      defined && context.structuredChecked === true ? canonicalOrUndefined(structured) : undefined;
    if (defined && agreesWithText(structured, reply.content)) reply.structuredContent = structured;
    else if (shown !== undefined) {
      reply.structuredContent = structured;
      reply.content.push({ type: 'text', text: shown });
      dropped += 1;
    } else dropped += 1;
  }
  return { ok: true, reply, dropped: dropped + content.dropped };
}

/** The canonical JSON of a checked structuredContent; undefined when it has none (then it is dropped). */
function canonicalOrUndefined(structured: Record<string, unknown>): string | undefined {
  try {
    return canonicalize(structured);
  } catch {
    return undefined;
  }
}

export type SanitisedPrompt =
  | { readonly ok: true; readonly reply: PromptResult; readonly dropped: number }
  | { readonly ok: false; readonly problem: string };

const PROMPT_ROLES = new Set(['user', 'assistant']);

/**
 * Rebuilds a `prompts/get` answer that passed the shape and size checks: its description and, per
 * message, its role and its one content item, rebuilt as a tool result's content is. A message
 * whose item is of a type this client's version lacks keeps its place and carries the note
 * instead; everything else the server sent (`_meta`, unknown members) is dropped and counted.
 */
export function sanitisePrompt(result: Record<string, unknown>, context: SanitiseContext): SanitisedPrompt {
  const version = effectiveVersion(context.protocolVersion);
  const own = (key: string) => (Object.hasOwn(result, key) ? result[key] : undefined);
  const description = own('description');
  const messages = own('messages');
  if (description !== undefined && typeof description !== 'string')
    return { ok: false, problem: 'description must be a string' };
  if (!Array.isArray(messages)) return { ok: false, problem: 'the prompt has no messages list' };
  let dropped = 0;
  for (const key of Object.keys(result)) {
    if (key !== 'description' && key !== 'messages') dropped += 1;
  }
  const rebuilt: { role: string; content: unknown }[] = [];
  for (const [index, message] of messages.entries()) {
    const at = `messages[${index}]`;
    if (!isObject(message) || !PROMPT_ROLES.has(message.role as string))
      return { ok: false, problem: `${at} must be a user or assistant message` };
    for (const key of Object.keys(message)) {
      if (key !== 'role' && key !== 'content') dropped += 1;
    }
    const content = sanitiseContent([message.content], () => `${at}.content`, version, context);
    if ('problem' in content) return { ok: false, problem: content.problem };
    dropped += content.dropped;
    // One item in, one out: the item rebuilt, its link as text, or the note that it was dropped.
    rebuilt.push({ role: message.role as string, content: (content.value as unknown[])[0] });
  }
  return {
    ok: true,
    reply: { ...(description !== undefined ? { description } : {}), messages: rebuilt },
    dropped,
  };
}

/**
 * One list of content items, each rebuilt by the spec of its type for `version` (`where` names
 * an item in a problem). An item of a type the version lacks is dropped, and one text item at the
 * end says which types were not passed on; a link becomes text. Shared by tool results and prompt
 * messages, whose content items are the same types.
 */
function sanitiseContent(
  source: readonly unknown[],
  where: (index: number) => string,
  version: string,
  context: SanitiseContext,
): Checked {
  let dropped = 0;
  const content: unknown[] = [];
  const skipped = new Map<string, string>();
  let skippedItems = 0;
  let moreTypes = false;
  for (const [index, item] of source.entries()) {
    const at = where(index);
    const type = isObject(item) && Object.hasOwn(item, 'type') ? item.type : undefined;
    if (typeof type !== 'string') return { problem: `${at} has no type` };
    const known = Object.hasOwn(CONTENT, type) ? CONTENT[type] : undefined;
    if (!known || (known.since !== undefined && version < known.since)) {
      dropped += 1;
      skippedItems += 1;
      if (skipped.size >= 5 && !skipped.has(type)) moreTypes = true;
      if (skipped.size < 5 && !skipped.has(type)) {
        skipped.set(
          type,
          known
            ? `${quoted(type, 40)} is not defined in MCP ${version}, which this client uses`
            : `${quoted(type, 40)} is not an MCP content type`,
        );
      }
      continue;
    }
    const checked = pick(item, known.spec, at, version);
    if ('problem' in checked) return checked;
    const clean = checked.value as Record<string, unknown>;
    if (type === 'image' || type === 'audio') {
      // Only raster images and audio whose bytes are their type (`media.ts`): an SVG image may load
      // URLs and run script when drawn. The whole item is dropped, counted as one, and named.
      const problem = mediaProblem(type, clean.mimeType as string, clean.data as string);
      if (problem) {
        dropped += 1;
        skippedItems += 1;
        const note = mediaNote(type, clean.mimeType as string);
        if (skipped.size >= 5 && !skipped.has(note)) moreTypes = true;
        if (skipped.size < 5) skipped.set(note, note);
        continue;
      }
    }
    dropped += checked.dropped;
    // The URI is not passed as sent (counted as dropped): the client gets the gateway's.
    if (type === 'resource_link') {
      clean.uri = context.linkUri(clean.uri as string);
      dropped += 1;
      // Every icon dropped: no list at all, as if the server had sent none.
      if (Array.isArray(clean.icons) && clean.icons.length === 0) delete clean.icons;
      content.push(clean);
    } else if (type === 'resource') {
      const inner = clean.resource as Record<string, unknown>;
      if (Object.hasOwn(inner, 'text') === Object.hasOwn(inner, 'blob')) {
        return { problem: `${at}.resource must carry exactly one of text and blob` };
      }
      inner.uri = context.linkUri(inner.uri as string);
      dropped += 1 + withInertMimeType(inner);
      content.push(clean);
    } else {
      content.push(clean);
    }
  }
  if (skipped.size > 0) {
    content.push({
      type: 'text',
      text: `ringfence: ${skippedItems} content item(s) of ${context.label} were not passed on: ${[...skipped.values()].join('; ')}${moreTypes ? '; and items of other types' : ''}.`,
    });
  }
  return ok(content, dropped);
}

/** The note's words for an image or audio item not passed on for its type or its bytes. */
const mediaNote = (kind: MediaKind, mimeType: string) =>
  `${kind === 'image' ? 'an image' : 'an audio item'} of type ${quoted(mimeType, 60)} (only ${allowedNames(kind)} ${kind === 'image' ? 'images' : 'audio'} whose data is of that type are passed on)`;

/**
 * Resource contents (embedded, or read) keep their `mimeType` only when it is inert (`media.ts`
 * `inertMimeType`): otherwise the text is called `text/plain` and the blob
 * `application/octet-stream`, and the change counts as one dropped member. The bytes are passed as
 * data: a client does not fetch anything to hold them, but it may choose a renderer by the type.
 */
function withInertMimeType(contents: Record<string, unknown>): number {
  if (typeof contents.mimeType !== 'string') return 0;
  const inert = inertMimeType(contents.mimeType, contents);
  if (inert === contents.mimeType) return 0;
  contents.mimeType = inert;
  return 1;
}

export type SanitisedRead =
  | { readonly ok: true; readonly reply: ReadResult; readonly dropped: number }
  | { readonly ok: false; readonly problem: string };

/**
 * Rebuilds a `resources/read` answer that passed its shape and size checks: each item of its
 * contents by the spec of a resource's contents (uri, mimeType, text or blob), its URI the
 * gateway's; everything else (`_meta`, unknown members) is dropped and counted.
 */
export function sanitiseRead(result: Record<string, unknown>, context: SanitiseContext): SanitisedRead {
  const version = effectiveVersion(context.protocolVersion);
  const contents = Object.hasOwn(result, 'contents') ? result.contents : undefined;
  if (!Array.isArray(contents)) return { ok: false, problem: 'the read result has no contents list' };
  let dropped = Object.keys(result).filter((key) => key !== 'contents').length;
  const rebuilt: unknown[] = [];
  for (const [index, item] of contents.entries()) {
    const checked = pick(item, RESOURCE_CONTENTS, `contents[${index}]`, version);
    if ('problem' in checked) return { ok: false, problem: checked.problem };
    const clean = checked.value as Record<string, unknown>;
    if (Object.hasOwn(clean, 'text') === Object.hasOwn(clean, 'blob'))
      return { ok: false, problem: `contents[${index}] must carry exactly one of text and blob` };
    clean.uri = context.linkUri(clean.uri as string);
    dropped += checked.dropped + withInertMimeType(clean);
    rebuilt.push(clean);
  }
  return { ok: true, reply: { contents: rebuilt }, dropped };
}
