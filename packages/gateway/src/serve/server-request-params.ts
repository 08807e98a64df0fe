import { CreateMessageRequestParamsSchema, ElicitRequestFormParamsSchema } from '@modelcontextprotocol/core';
import { WireError } from '../errors.js';
import { clip, isShownEscaped, type RenderMode, rendered } from '../text/render.js';
import { mediaProblem } from './media.js';

/**
 * What a server's sampling or elicitation request becomes before a client sees it: rebuilt from
 * the members a client needs, every string a model or a person reads rendered once, and every line
 * of the server's own words begun by the gateway's label. See docs/architecture.md#requests-from-servers-sampling-elicitation-roots.
 */

/** A request that is not passed on: the server gets this error, the audit log its rule and reason. */
export class ServerRequestRefused extends WireError {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(-32600, message);
  }
}

/** The label the gateway puts in front of every line a server wrote (server names are plain). */
export const serverLabel = (server: string): string => `[MCP server "${server}", via ringfence] `;

/**
 * A server's multi-line text with the server named at the start of every line. Rendered first, so
 * newline is the only line break left (CR, VT, FF, NEL, U+2028 and U+2029 are shown as `\u{…}`):
 * no line can begin with the server's words, so a label the server writes into its text always
 * follows the gateway's own.
 */
export const labelled = (server: string, text: string): string => {
  const label = serverLabel(server);
  return label + rendered(text, 'block').replaceAll('\n', `\n${label}`);
};

/** A MIME type as a client expects it (`image/png`); anything else is not passed on. */
const MIME_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
/** Model hints: a model's name, no longer than this. */
const MODEL_HINT_MAX = 100;
const MODEL_HINTS_MAX = 10;

type SamplingContent = { type: string } & Record<string, unknown>;

/**
 * One content block as the client receives it. Text is labelled line by line; an image or audio
 * keeps its data and type alone, and only when `media.ts` passes them (a raster image or audio
 * whose bytes are its type; anything else is refused, rule `media`). A `tool_use` or `tool_result` block is refused: a server that is
 * not given tools has no tool history, and one it wrote would be a call the model never made, to
 * a server of the attacker's naming, "answered" with the attacker's words.
 */
function contentBlock(server: string, block: SamplingContent): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: labelled(server, String(block.text)) };
    case 'image':
    case 'audio': {
      if (typeof block.mimeType !== 'string' || !MIME_TYPE.test(block.mimeType))
        throw new ServerRequestRefused(
          'malformed',
          `its sampling request has ${block.type} content whose mimeType is not a MIME type`,
        );
      // The one check of images and audio (`media.ts`): an SVG image may load URLs when drawn.
      const problem = mediaProblem(block.type, block.mimeType, String(block.data));
      if (problem)
        throw new ServerRequestRefused(
          'media',
          `its sampling request has ${block.type} content that is not passed on: ${problem}`,
        );
      return { type: block.type, data: block.data, mimeType: block.mimeType };
    }
    case 'tool_use':
    case 'tool_result':
      throw new ServerRequestRefused(
        'tool-content',
        `its sampling request holds ${block.type} content: a server may not write the model's tool calls or their results (they would be calls the model never made). Only text, image and audio content is passed on; the server's author can send the text as text`,
      );
    default:
      throw new ServerRequestRefused(
        'malformed',
        `its sampling request holds content of type "${clip(String(block.type), 40)}", which ringfence does not pass on (only text, image and audio)`,
      );
  }
}

/** Model hints whose names are plain (nothing shown escaped), at most ten; the rest are dropped. */
function modelPreferences(preferences: Record<string, unknown>): Record<string, unknown> {
  const { hints, costPriority, speedPriority, intelligencePriority } = preferences as {
    hints?: { name?: string }[];
    costPriority?: number;
    speedPriority?: number;
    intelligencePriority?: number;
  };
  const plainHints = (hints ?? [])
    .map((hint) => hint.name)
    .filter(
      (name): name is string =>
        typeof name === 'string' && name.length <= MODEL_HINT_MAX && rendered(name, 'name') === name,
    )
    .slice(0, MODEL_HINTS_MAX)
    .map((name) => ({ name }));
  return {
    ...(plainHints.length > 0 ? { hints: plainHints } : {}),
    ...(costPriority !== undefined ? { costPriority } : {}),
    ...(speedPriority !== undefined ? { speedPriority } : {}),
    ...(intelligencePriority !== undefined ? { intelligencePriority } : {}),
  };
}

/**
 * What the client receives for a sampling request. Members a client needs, rebuilt:
 * - every message's text, at whatever position, labelled line by line and rendered;
 *   `tool_use` and `tool_result` content refused (see `contentBlock`); `_meta` and annotations dropped;
 * - `systemPrompt` always present, labelled and rendered (a client's own prompt cannot be
 *   mistaken for the server's);
 * - `stopSequences` dropped: nobody reads them, and a server could use one to end the model's
 *   answer just before the part that would warn the person;
 * - `includeContext` dropped (other servers' context is not this server's to ask for), tools
 *   refused, `metadata` and `task` dropped, model hints kept only when their names are plain.
 */
export function samplingParams(server: string, params: unknown): Record<string, unknown> {
  const parsed = CreateMessageRequestParamsSchema.safeParse(params);
  if (!parsed.success) throw new ServerRequestRefused('malformed', 'its sampling request is malformed');
  const request = parsed.data;
  if (request.tools !== undefined || request.toolChoice !== undefined)
    throw new ServerRequestRefused('malformed', 'sampling with tools is not passed on by ringfence');
  const messages = request.messages.map((message) => ({
    role: message.role,
    content: Array.isArray(message.content)
      ? message.content.map((block) => contentBlock(server, block as SamplingContent))
      : contentBlock(server, message.content as SamplingContent),
  }));
  return {
    messages,
    maxTokens: request.maxTokens,
    systemPrompt: labelled(server, request.systemPrompt ?? ''),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.modelPreferences !== undefined
      ? { modelPreferences: modelPreferences(request.modelPreferences) }
      : {}),
  };
}

/** Keys of a field's schema whose strings come back as the answer: passed on only unchanged. */
const ANSWER_KEYS = new Set(['enum', 'const']);

/**
 * Why `text` would not be shown as it is in `mode`, or undefined when `rendered(text, mode)` is
 * `text`: the first character shown escaped, or else a backslash the rendering doubles (one before
 * `u{` or before a character shown escaped), which a person reading by the documented rule would
 * read as the start of an escape.
 */
function changedWhenShown(text: string, mode: RenderMode): string | undefined {
  if (rendered(text, mode) === text) return undefined;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (isShownEscaped(cp, mode))
      return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}, a character that would be shown escaped`;
  }
  return 'a backslash before "u{", which would be shown doubled (a person reading by the documented rule would take it for the start of an escape)';
}

/**
 * The refusal of a name or value that would change when shown. The message holds the server's
 * text as it came (cut), like every reason: whoever shows it (`audit tail`) renders it, once.
 */
const refusedName = (what: string, text: string, hidden: string) =>
  new ServerRequestRefused(
    'hidden-characters',
    `its elicitation has ${what} "${clip(text, 80)}" holding ${hidden}. Answers come back keyed by it or as it, so it can only be passed on as it is, and is refused; the server's author can use plain text`,
  );

/**
 * One field's schema (as the SDK parsed it: only the members MCP defines) with every string
 * rendered as one line: titles, descriptions, enumNames, the titles of `oneOf`/`anyOf` options,
 * defaults, formats. The values an answer is made of (`enum` entries, `const`) cannot be rendered
 * without changing the answer, so one that would change is refused.
 */
function fieldSchema(field: string, value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (!ANSWER_KEYS.has(key)) return rendered(value, 'line');
    const hidden = changedWhenShown(value, 'line');
    if (hidden) throw refusedName(`an option of field "${field}":`, value, hidden);
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => fieldSchema(field, item, key));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([member, child]) => [member, fieldSchema(field, child, member)]),
    );
  return value;
}

/**
 * The SDK's parse of an elicitation builds `properties` by assignment, so a field named
 * `__proto__` (an own key of the JSON the server sent) sets the prototype and vanishes, and
 * `required` then names nothing: the person would see a form without the field. Every own key of
 * the raw `properties` must still be an own key after the parse, and `__proto__` is refused
 * outright (a client's own parse would do the same to it).
 */
function droppedByParse(params: unknown, parsed: Record<string, unknown>): void {
  const raw = (params as { requestedSchema?: { properties?: unknown } } | undefined)?.requestedSchema
    ?.properties;
  if (typeof raw !== 'object' || raw === null) return;
  for (const field of Object.keys(raw)) {
    if (field === '__proto__' || !Object.hasOwn(parsed, field))
      throw new ServerRequestRefused(
        'malformed',
        `its elicitation has a field named "${clip(field, 80)}", which reading the request (the SDK's parse, the client's too) drops or changes, so the person would be shown a form without it; the server's author can rename the field`,
      );
  }
}

/**
 * What the client receives for an elicitation: form mode only (a URL would send the person to a
 * page of the server's choosing), the message labelled line by line, every string of the
 * requested schema rendered as one line, and fields and options whose names would change refused.
 */
export function elicitationParams(server: string, params: unknown): Record<string, unknown> {
  if ((params as { mode?: unknown } | undefined)?.mode === 'url')
    throw new ServerRequestRefused('malformed', 'elicitation by URL is not passed on by ringfence');
  const parsed = ElicitRequestFormParamsSchema.safeParse(params);
  if (!parsed.success) throw new ServerRequestRefused('malformed', 'its elicitation request is malformed');
  const { message, requestedSchema } = parsed.data;
  droppedByParse(params, requestedSchema.properties);
  // fromEntries defines own members: no field name can reach a prototype.
  const properties: Record<string, unknown> = Object.fromEntries(
    Object.entries(requestedSchema.properties).map(([field, schema]) => {
      const hidden = changedWhenShown(field, 'name');
      if (hidden) throw refusedName('the field', field, hidden);
      return [field, fieldSchema(field, schema)];
    }),
  );
  const required = (requestedSchema.required ?? []).filter((field) => Object.hasOwn(properties, field));
  return {
    mode: 'form',
    message: labelled(server, message),
    requestedSchema: {
      type: 'object',
      properties,
      ...(requestedSchema.required !== undefined ? { required } : {}),
    },
  };
}
