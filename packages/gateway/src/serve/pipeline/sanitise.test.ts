import { describe, expect, it } from 'vitest';
import { type Naming, PREFIXED } from '../../catalog/present.js';
import { clientUri } from '../resource-uri.js';
import {
  effectiveVersion,
  type SanitiseContext,
  type Sanitised,
  sanitisePrompt,
  sanitiseRead,
  sanitiseResult,
} from './sanitise.js';

const LATEST = '2025-11-25';
const ONLY: Naming = { prefixed: false };
/** `structuredChecked`: as for a tool with an output schema unless a test says otherwise. */
const context = (
  protocolVersion: string | undefined,
  naming: Naming = PREFIXED,
  structuredChecked = true,
): SanitiseContext => ({
  protocolVersion,
  server: 'files',
  label: 'files/read',
  linkUri: (uri) => clientUri('files', uri, naming),
  structuredChecked,
});
const embeddedUri = (server: string, uri: string) => `ringfence:${server}/${uri}`;
/** As a server's answer arrives: parsed JSON, so prototype-named keys are own members. */
const wire = (json: string) => JSON.parse(json) as Record<string, unknown>;
const run = (result: Record<string, unknown>, version: string | undefined = LATEST) =>
  sanitiseResult(result, context(version));

function passed(outcome: Sanitised) {
  if (!outcome.ok) throw new Error(`expected a result, got the problem: ${outcome.problem}`);
  return outcome;
}
function problem(outcome: Sanitised): string {
  if (outcome.ok) throw new Error(`expected a problem, got ${JSON.stringify(outcome.reply)}`);
  return outcome.problem;
}

const BLOB = Buffer.from('binary').toString('base64');
/** Image and audio items pass only as what their bytes are (`media.ts`): the start of a PNG, of a WAV. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');
const WAV = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1').toString('base64');
/** The start of a PNG: enough for an icon the client may draw. */
const PNG_ICON = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64')}`;

describe('sanitiseResult: only what the protocol defines', () => {
  it('drops _meta at every level and counts each', () => {
    const result = wire(`{
      "_meta": {"trace": "top"},
      "content": [
        {"type": "text", "text": "a", "_meta": {"x": 1}, "annotations": {"priority": 0.5, "_meta": {"y": 2}}},
        {"type": "image", "data": "${PNG}", "mimeType": "image/png", "_meta": {}},
        {"type": "audio", "data": "${WAV}", "mimeType": "audio/wav", "_meta": {"z": 3}},
        {"type": "resource", "_meta": {"a": 1}, "resource": {"uri": "mem://x", "text": "body", "_meta": {"b": 2}}}
      ],
      "structuredContent": {"_meta": "tool data, checked by the output schema"}
    }`);
    const out = passed(run(result));
    expect(out.reply).toStrictEqual({
      content: [
        { type: 'text', text: 'a', annotations: { priority: 0.5 } },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'audio', data: WAV, mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: embeddedUri('files', 'mem://x'), text: 'body' } },
        // No text item says what structuredContent says: the gateway's text item does.
        { type: 'text', text: '{"_meta":"tool data, checked by the output schema"}' },
      ],
      structuredContent: { _meta: 'tool data, checked by the output schema' },
    });
    // top, text, annotations, image, audio, resource item, resource contents, the replaced uri,
    // and the text item added.
    expect(out.dropped).toBe(9);
  });

  it('drops unknown members at the top level, in items, in annotations and in embedded resources', () => {
    const result = wire(`{
      "content": [
        {"type": "text", "text": "a", "html": "<b>a</b>", "annotations": {"audience": ["user"], "color": "red"}},
        {"type": "resource", "resource": {"uri": "mem://x", "blob": "${BLOB}", "mimeType": "application/octet-stream", "etag": "1"}, "hint": 1}
      ],
      "isError": false,
      "nextAction": "open file:///etc/passwd",
      "toolResult": {"old": true}
    }`);
    const out = passed(run(result));
    expect(out.reply).toStrictEqual({
      content: [
        { type: 'text', text: 'a', annotations: { audience: ['user'] } },
        {
          type: 'resource',
          resource: {
            uri: embeddedUri('files', 'mem://x'),
            blob: BLOB,
            mimeType: 'application/octet-stream',
          },
        },
      ],
      isError: false,
    });
    // nextAction, toolResult, html, color, etag, hint, and the replaced uri.
    expect(out.dropped).toBe(7);
  });

  it('passes a clean result unchanged and counts nothing', () => {
    const result = {
      content: [{ type: 'text', text: '{"n": 1}', annotations: { audience: ['assistant'], priority: 1 } }],
      structuredContent: { n: 1 },
      isError: false,
    };
    const out = passed(run(result));
    expect(out.reply).toStrictEqual(result);
    expect(out.dropped).toBe(0);
  });

  it('passes structuredContent as the very object the output schema checked, and drops it from an error', () => {
    const structured = { deep: { _meta: 1, list: [1, 2] } };
    expect(passed(run({ content: [], structuredContent: structured })).reply.structuredContent).toBe(
      structured,
    );
    const error = passed(run({ content: [], structuredContent: structured, isError: true }));
    expect(error.reply).toStrictEqual({ content: [], isError: true });
    expect(error.dropped).toBe(1);
  });
});

describe('sanitiseResult: per negotiated protocol version', () => {
  const everything = () =>
    wire(`{
      "content": [
        {"type": "text", "text": "t", "annotations": {"priority": 0, "lastModified": "2025-01-12T15:00:58Z"}},
        {"type": "audio", "data": "${WAV}", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "https://example.com/r", "name": "r", "icons": [{"src": "https://example.com/i.png"}, {"src": "${PNG_ICON}", "sizes": ["48x48"]}]}
      ],
      "structuredContent": {"n": 1}
    }`);
  const link = {
    type: 'resource_link',
    uri: 'ringfence:files/https://example.com/r',
    name: 'r',
    // The https: icon is dropped: a client would fetch it itself.
    icons: [{ src: PNG_ICON, sizes: ['48x48'] }],
  };
  const { icons: _icons, ...linkBefore2025_11 } = link;
  const text = (lastModified: boolean) => ({
    type: 'text',
    text: 't',
    annotations: lastModified ? { priority: 0, lastModified: '2025-01-12T15:00:58Z' } : { priority: 0 },
  });
  const audio = { type: 'audio', data: WAV, mimeType: 'audio/wav' };
  /** What the gateway adds where no text item says what structuredContent says (from 2025-06-18). */
  const shown = { type: 'text', text: '{"n":1}' };
  const notice = (count: number, reasons: string) => ({
    type: 'text',
    text: `ringfence: ${count} content item(s) of files/read were not passed on: ${reasons}.`,
  });

  const cases: { version: string | undefined; reply: unknown; dropped: number }[] = [
    {
      version: '2024-11-05',
      reply: {
        content: [
          text(false),
          notice(
            2,
            '"audio" is not defined in MCP 2024-11-05, which this client uses; "resource_link" is not defined in MCP 2024-11-05, which this client uses',
          ),
        ],
      },
      // lastModified, audio, resource_link, structuredContent
      dropped: 4,
    },
    {
      version: '2025-03-26',
      reply: {
        content: [
          text(false),
          audio,
          notice(1, '"resource_link" is not defined in MCP 2025-03-26, which this client uses'),
        ],
      },
      dropped: 3,
    },
    {
      version: '2025-06-18',
      reply: { content: [text(true), audio, linkBefore2025_11, shown], structuredContent: { n: 1 } },
      // icons (defined from 2025-11-25), the link's URI replaced, the text item added
      dropped: 3,
    },
    {
      version: '2025-11-25',
      reply: { content: [text(true), audio, link, shown], structuredContent: { n: 1 } },
      // the link's URI replaced, the https: icon, the text item added
      dropped: 3,
    },
    // A version newer than this code knows gets the newest members it knows, nothing more.
    {
      version: '2026-07-28',
      reply: { content: [text(true), audio, link, shown], structuredContent: { n: 1 } },
      dropped: 3,
    },
  ];
  for (const c of cases) {
    it(`gives a ${c.version} client only what ${c.version} defines`, () => {
      const out = passed(run(everything(), c.version));
      expect(out.reply).toStrictEqual(c.reply);
      expect(out.dropped).toBe(c.dropped);
    });
  }

  it('applies the oldest version when the client named none or an unreadable one', () => {
    for (const version of [undefined, '', 'latest', '2024-10-07', '2025-11-25; drop table']) {
      expect(effectiveVersion(version)).toBe('2024-11-05');
      expect(passed(sanitiseResult(everything(), context(version))).reply).toStrictEqual(cases[0]!.reply);
    }
  });

  it('drops a content type the specification does not define, and says so once per type', () => {
    const out = passed(
      run({
        content: [
          { type: 'widget', html: '<script>' },
          { type: 'text', text: 'kept' },
          { type: 'widget' },
          { type: 'toString' },
          { type: '__proto__' },
        ],
      }),
    );
    expect(out.reply).toStrictEqual({
      content: [
        { type: 'text', text: 'kept' },
        notice(
          4,
          '"widget" is not an MCP content type; "toString" is not an MCP content type; "__proto__" is not an MCP content type',
        ),
      ],
    });
    expect(out.dropped).toBe(4);
  });
});

describe("sanitiseResult: links and embedded resources point into the gateway's namespace", () => {
  const linked = (uri: string, naming: Naming = PREFIXED) =>
    passed(
      sanitiseResult(
        { content: [{ type: 'resource_link', uri, name: 'report', _meta: { x: 1 } }] },
        context(LATEST, naming),
      ),
    );

  it('gives a file: link a URI the client can only read through the gateway, from that server', () => {
    for (const naming of [PREFIXED, ONLY]) {
      for (const uri of ['file:///etc/passwd', 'FILE:///etc/passwd', 'file://host/etc/passwd']) {
        const out = linked(uri, naming);
        expect(out.reply.content).toStrictEqual([
          { type: 'resource_link', uri: `ringfence:files/${uri}`, name: 'report' },
        ]);
        // _meta, and the URI replaced.
        expect(out.dropped).toBe(2);
      }
    }
  });

  it('gives an embedded resource its URI in the namespace, and tells the gateway it may be read', () => {
    const seen: string[] = [];
    const out = passed(
      sanitiseResult(
        { content: [{ type: 'resource', resource: { uri: 'file:///etc/passwd', text: 'root:x:0:0' } }] },
        {
          ...context(LATEST),
          linkUri: (uri) => {
            seen.push(uri);
            return `ringfence:files/${uri}`;
          },
        },
      ),
    );
    expect(out.reply.content).toStrictEqual([
      { type: 'resource', resource: { uri: 'ringfence:files/file:///etc/passwd', text: 'root:x:0:0' } },
    ]);
    expect(seen).toEqual(['file:///etc/passwd']);
  });
});

describe('sanitiseRead', () => {
  it('rebuilds each item (uri, mimeType, text or blob), its URI the gateway’s, and drops the rest', () => {
    const out = sanitiseRead(
      wire(`{
        "_meta": {"x": 1},
        "contents": [
          {"uri": "test://a", "mimeType": "text/plain", "text": "hi", "_meta": {}, "extra": 1},
          {"uri": "test://b", "blob": "${BLOB}"}
        ]
      }`),
      context(LATEST),
    );
    expect(out).toStrictEqual({
      ok: true,
      reply: {
        contents: [
          { uri: 'ringfence:files/test://a', mimeType: 'text/plain', text: 'hi' },
          { uri: 'ringfence:files/test://b', blob: BLOB },
        ],
      },
      dropped: 3,
    });
  });

  it('refuses an item with both or neither of text and blob, or a blob that is not base64', () => {
    for (const item of [
      { uri: 'test://a' },
      { uri: 'test://a', text: 'x', blob: BLOB },
      { uri: 'test://a', blob: '@@' },
    ])
      expect(sanitiseRead({ contents: [item] }, context(LATEST)).ok).toBe(false);
    expect(sanitiseRead({ contents: 'x' }, context(LATEST)).ok).toBe(false);
  });
});

describe('sanitiseResult: types are checked; a malformed result is refused whole', () => {
  const malformed: [string, Record<string, unknown>, string][] = [
    [
      'text that is not a string',
      { content: [{ type: 'text', text: 1 }] },
      'content[0].text must be a string',
    ],
    ['a missing text', { content: [{ type: 'text' }] }, 'content[0] has no text'],
    ['an item that is not an object', { content: ['hi'] }, 'content[0] has no type'],
    ['an item without a type', { content: [{ text: 'hi' }] }, 'content[0] has no type'],
    ['a type that is not a string', { content: [{ type: 7 }] }, 'content[0] has no type'],
    [
      'image data that is not base64',
      { content: [{ type: 'image', data: '@@', mimeType: 'image/png' }] },
      'content[0].data must be base64',
    ],
    ['an image without mimeType', { content: [{ type: 'image', data: BLOB }] }, 'content[0] has no mimeType'],
    [
      'null annotations',
      { content: [{ type: 'text', text: 'a', annotations: null }] },
      'content[0].annotations must be an object',
    ],
    [
      'a priority out of range',
      { content: [{ type: 'text', text: 'a', annotations: { priority: 2 } }] },
      'content[0].annotations.priority must be a number from 0 to 1',
    ],
    [
      'an unknown audience',
      { content: [{ type: 'text', text: 'a', annotations: { audience: ['admin'] } }] },
      'content[0].annotations.audience must be a list of "user" and "assistant"',
    ],
    [
      'a lastModified that is not a time',
      { content: [{ type: 'text', text: 'a', annotations: { lastModified: 'yesterday' } }] },
      'content[0].annotations.lastModified must be an ISO 8601 time with an offset',
    ],
    [
      'a lastModified on a day that does not exist',
      { content: [{ type: 'text', text: 'a', annotations: { lastModified: '2025-02-30T00:00:00Z' } }] },
      'content[0].annotations.lastModified must be an ISO 8601 time with an offset',
    ],
    [
      'a link without a name',
      { content: [{ type: 'resource_link', uri: 'mem://x' }] },
      'content[0] has no name',
    ],
    [
      'a link whose uri is not a string',
      { content: [{ type: 'resource_link', uri: {}, name: 'n' }] },
      'content[0].uri must be a string',
    ],
    [
      'a negative link size',
      { content: [{ type: 'resource_link', uri: 'mem://x', name: 'n', size: -1 }] },
      'content[0].size must be a whole number of bytes',
    ],
    [
      'icons that are not a list',
      { content: [{ type: 'resource_link', uri: 'mem://x', name: 'n', icons: 'x' }] },
      'content[0].icons must be a list',
    ],
    [
      'an embedded resource without uri',
      { content: [{ type: 'resource', resource: { text: 'a' } }] },
      'content[0].resource has no uri',
    ],
    [
      'an embedded resource with text and blob',
      { content: [{ type: 'resource', resource: { uri: 'a:b', text: 'a', blob: BLOB } }] },
      'content[0].resource must carry exactly one of text and blob',
    ],
    [
      'an embedded resource with neither',
      { content: [{ type: 'resource', resource: { uri: 'a:b' } }] },
      'content[0].resource must carry exactly one of text and blob',
    ],
    [
      'a later malformed item',
      {
        content: [
          { type: 'text', text: 'ok' },
          { type: 'text', text: null },
        ],
      },
      'content[1].text must be a string',
    ],
    ['isError that is not a boolean', { content: [], isError: 'yes' }, 'isError must be true or false'],
    [
      'structuredContent that is a list',
      { content: [], structuredContent: [] },
      'structuredContent must be an object',
    ],
    ['no content list', { structuredContent: {} }, 'the result has no content list'],
  ];
  for (const [name, result, expected] of malformed) {
    it(`refuses ${name}`, () => {
      expect(problem(run(result))).toBe(expected);
    });
  }

  it('reads only own members: an inherited text or content is not there', () => {
    const item = Object.assign(Object.create({ text: 'inherited' }), { type: 'text' });
    expect(problem(run({ content: [item] }))).toBe('content[0] has no text');
    expect(problem(run(Object.create({ content: [] })))).toBe('the result has no content list');
  });
});

describe('sanitiseResult: prototype-named keys', () => {
  it('drops __proto__ and constructor members as unknown and never lets them shape the reply', () => {
    const result = wire(`{
      "__proto__": {"isError": true, "polluted": true},
      "constructor": {"prototype": {"polluted": true}},
      "content": [
        {"type": "text", "text": "a", "__proto__": {"annotations": {"audience": ["user"]}}, "constructor": 1},
        {"type": "resource", "resource": {"uri": "x:y", "text": "b", "__proto__": {"blob": "AAAA"}}}
      ]
    }`);
    const out = passed(run(result));
    expect(out.reply).toStrictEqual({
      content: [
        { type: 'text', text: 'a' },
        { type: 'resource', resource: { uri: embeddedUri('files', 'x:y'), text: 'b' } },
      ],
    });
    for (const item of out.reply.content as object[])
      expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    // top: __proto__, constructor; text: __proto__, constructor; resource: __proto__, and the uri.
    expect(out.dropped).toBe(6);
  });
});

describe('sanitiseResult: huge counts', () => {
  it('counts every dropped member of a very long result exactly, without recursion into what it drops', () => {
    let deep: unknown = { end: true };
    for (let i = 0; i < 10_000; i += 1) deep = { _meta: deep };
    const items = Array.from({ length: 50_000 }, (_, i) => ({
      type: 'text',
      text: String(i),
      _meta: deep,
      a: 1,
      b: 2,
    }));
    const out = passed(run({ content: items, _meta: deep }));
    expect(out.dropped).toBe(50_000 * 3 + 1);
    expect(out.reply.content).toHaveLength(50_000);
    expect(out.reply.content[49_999]).toStrictEqual({ type: 'text', text: '49999' });
  });

  it('names at most five unknown types and counts every item', () => {
    const items = Array.from({ length: 100_000 }, (_, i) => ({ type: `t${i % 7}` }));
    const out = passed(run({ content: items }));
    expect(out.dropped).toBe(100_000);
    expect(out.reply.content).toHaveLength(1);
    const { text } = out.reply.content[0] as { text: string };
    expect(text).toMatch(/^ringfence: 100000 content item\(s\) of files\/read were not passed on: /);
    expect(text.match(/is not an MCP content type/g)).toHaveLength(5);
    expect(text).toMatch(/; and items of other types\.$/);
  });
});

describe('sanitiseResult: images and audio only as what their bytes are (media.ts)', () => {
  const SVG = Buffer.from('<svg><image href="https://evil.example/x"/></svg>').toString('base64');

  it('drops an SVG image, another type, or bytes that are not the type, names each, counts each as one', () => {
    const out = passed(
      run({
        content: [
          { type: 'text', text: 'chart:' },
          { type: 'image', data: SVG, mimeType: 'image/svg+xml', _meta: {} },
          { type: 'image', data: SVG, mimeType: 'image/png' },
          { type: 'audio', data: WAV, mimeType: 'audio/midi' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'audio', data: WAV, mimeType: 'audio/wav' },
        ],
      }),
    );
    expect(out.reply.content).toStrictEqual([
      { type: 'text', text: 'chart:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'audio', data: WAV, mimeType: 'audio/wav' },
      {
        type: 'text',
        text: 'ringfence: 3 content item(s) of files/read were not passed on: an image of type "image/svg+xml" (only PNG, JPEG, GIF or WebP images whose data is of that type are passed on); an image of type "image/png" (only PNG, JPEG, GIF or WebP images whose data is of that type are passed on); an audio item of type "audio/midi" (only WAV, MP3, Ogg, WebM, FLAC or MP4 audio whose data is of that type are passed on).',
      },
    ]);
    expect(out.dropped).toBe(3);
  });

  it('gives a prompt message whose image is an SVG the note in its place', () => {
    const out = sanitisePrompt(
      {
        messages: [
          { role: 'user', content: { type: 'image', data: SVG, mimeType: 'image/svg+xml' } },
          { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
        ],
      },
      context(LATEST),
    );
    expect(out).toStrictEqual({
      ok: true,
      reply: {
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: 'ringfence: 1 content item(s) of files/read were not passed on: an image of type "image/svg+xml" (only PNG, JPEG, GIF or WebP images whose data is of that type are passed on).',
            },
          },
          { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
        ],
      },
      dropped: 1,
    });
  });

  it('keeps an embedded resource blob as data, its mimeType only when inert, and counts the change', () => {
    const out = passed(
      run({
        content: [
          { type: 'resource', resource: { uri: 'a:svg', blob: SVG, mimeType: 'image/svg+xml' } },
          {
            type: 'resource',
            resource: { uri: 'a:html', text: '<script>x</script>', mimeType: 'text/html' },
          },
          { type: 'resource', resource: { uri: 'a:png', blob: PNG, mimeType: 'image/png' } },
          { type: 'resource', resource: { uri: 'a:md', text: '# hi', mimeType: 'text/markdown' } },
        ],
      }),
    );
    expect(out.reply.content.map((c) => (c as { resource: { mimeType: string } }).resource.mimeType)).toEqual(
      ['application/octet-stream', 'text/plain', 'image/png', 'text/markdown'],
    );
    expect((out.reply.content[0] as { resource: { blob: string } }).resource.blob).toBe(SVG);
    // Four URIs namespaced, two types changed.
    expect(out.dropped).toBe(6);
  });

  it('renames a read resource of a type a client could render as a page or a script', () => {
    const out = sanitiseRead(
      {
        contents: [
          { uri: 'a:b', text: '<html><img src="https://evil.example/x"></html>', mimeType: 'text/html' },
        ],
      },
      context(LATEST),
    );
    expect(out).toMatchObject({ ok: true, reply: { contents: [{ mimeType: 'text/plain' }] }, dropped: 1 });
  });
});
