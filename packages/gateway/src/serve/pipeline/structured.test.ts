import { describe, expect, it } from 'vitest';
import { sanitiseResult } from './sanitise.js';
import { agreesWithText } from './structured.js';

const text = (t: string) => ({ type: 'text', text: t });

/** A tool with no output schema: nothing checked its structuredContent. */
const unchecked = (result: Record<string, unknown>, structuredChecked = false) =>
  sanitiseResult(result, {
    protocolVersion: '2025-11-25',
    server: 's',
    label: 's/t',
    linkUri: (uri) => `ringfence:s/${uri}`,
    ...(structuredChecked ? { structuredChecked } : {}),
  });

describe('structuredContent of a tool without an output schema', () => {
  const structured = { balance: 100, owner: 'alice', items: [1, { a: null }] };

  it('passes when a text item is its JSON, whatever the spacing and member order', () => {
    for (const json of [
      JSON.stringify(structured),
      JSON.stringify(structured, null, 2),
      '{"items":[1.0,{"a":null}],"owner":"alice","balance":1e2}',
      ' \n{"owner":"\\u0061lice","balance":100,"items":[1,{"a":null}]}\n',
    ]) {
      const out = unchecked({ content: [text('summary first'), text(json)], structuredContent: structured });
      expect(out.ok && out.reply.structuredContent, json).toBe(structured);
      expect(out.ok && out.dropped).toBe(0);
    }
  });

  it('is dropped and counted when it contradicts the content, or when no text says it', () => {
    const contradicting: { content: unknown[]; why: string; uris?: number }[] = [
      {
        content: [text('{"balance": 0, "owner": "alice", "items": [1, {"a": null}]}')],
        why: 'another value',
      },
      { content: [text('{"balance": 100, "owner": "alice"}')], why: 'a member fewer' },
      {
        content: [text('{"balance":100,"owner":"alice","items":[1,{"a":null}],"x":1}')],
        why: 'a member more',
      },
      {
        content: [text('{"balance":"100","owner":"alice","items":[1,{"a":null}]}')],
        why: 'a string for a number',
      },
      {
        content: [text('{"balance":1,"balance":100,"owner":"alice","items":[1,{"a":null}]}')],
        why: 'a duplicated member, read differently by different parsers',
      },
      { content: [text('balance: 100, owner: alice')], why: 'prose' },
      { content: [text('{"balance":100,"owner":"alice","items":[1,{"a":null}],}')], why: 'not strict JSON' },
      { content: [], why: 'no content at all' },
      {
        content: [{ type: 'resource', resource: { uri: 'x', text: JSON.stringify(structured) } }],
        why: 'the JSON in an embedded resource, not a text item',
        uris: 1,
      },
      { content: [text(`[${JSON.stringify(structured)}]`)], why: 'a list holding it' },
    ];
    for (const { content, why, uris = 0 } of contradicting) {
      const out = unchecked({ content, structuredContent: structured });
      expect(out.ok, why).toBe(true);
      expect(out.ok && Object.hasOwn(out.reply, 'structuredContent'), why).toBe(false);
      // structuredContent, and an embedded resource's URI replaced.
      expect(out.ok && out.dropped, why).toBe(1 + uris);
    }
  });

  it('passes as the output schema checked it when there is one, without comparing', () => {
    const out = unchecked({ content: [text('anything')], structuredContent: structured }, true);
    expect(out.ok && out.reply.structuredContent).toBe(structured);
  });

  it('never agrees when either side has no canonical form', () => {
    expect(agreesWithText({ s: '\ud800' }, [text('{"s":"\\ud800"}')])).toBe(false);
    expect(agreesWithText({ n: 1 }, [{ type: 'text', text: 42 }, text('{"n":1}')])).toBe(true);
    expect(agreesWithText({ n: 1 }, [null, text('{"n":1}')])).toBe(true);
  });
});
