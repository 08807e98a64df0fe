/**
 * A tool whose schema holds a pattern that cannot keep its ECMA-262 meaning in linear time is
 * withheld when the catalog is built (serve/catalog.ts), with the guard's reason; its siblings
 * are served. Real guard, real pin store in a temporary home, no policy.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PinStore } from '../pins/store.js';
import { LOCAL_ONLY } from '../ports/policy.js';
import { buildServerCatalog, withheldLine } from '../serve/catalog.js';
import { SchemaGuard } from './guard.js';

const guard = new SchemaGuard();
let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-pattern-'));
  await guard.warmUp();
}, 60_000);
afterAll(async () => {
  await guard.close();
  await rm(home, { recursive: true, force: true });
});

const tool = (name: string, properties: Record<string, unknown>) => ({
  name,
  description: name,
  inputSchema: { type: 'object', properties },
});

describe('catalog: tools with patterns that cannot keep their meaning', () => {
  it('withholds them with the reason and serves the others', async () => {
    const catalog = await buildServerCatalog({
      server: 'files',
      destination: 'test',
      rawTools: [
        tool('read', { path: { type: 'string', pattern: '^\\S+$' } }),
        tool('twice', { word: { type: 'string', pattern: '^(\\w+) \\1$' } }),
        // An RE2 flag group: RE2 would compile it case-insensitively, JavaScript not at all.
        tool('admin', { user: { type: 'string', pattern: '(?i)^admin$' } }),
        tool('peek', { q: { type: 'object', patternProperties: { '^(?=x)': {} } } }),
      ],
      problems: [],
      localAllow: undefined,
      pins: new PinStore(home),
      guard,
      policy: LOCAL_ONLY,
    });
    expect(catalog.entries.map((e) => e.tool)).toEqual(['read']);
    const reasons = Object.fromEntries(catalog.withheld.map((w) => [w.tool, [w.kind, w.reason]]));
    const linear = 'which cannot be checked in linear time with ECMA-262 meaning';
    expect(reasons).toEqual({
      twice: [
        'schema',
        `its inputSchema is refused: pattern "^(\\\\w+) \\\\1$" uses a backreference "\\1", ${linear}`,
      ],
      admin: [
        'schema',
        'its inputSchema is refused: pattern "(?i)^admin$" is not a valid ECMA-262 regular expression (u flag): an unknown group "(?i"',
      ],
      peek: ['schema', `its inputSchema is refused: pattern "^(?=x)" uses a lookahead "(?=…)", ${linear}`],
    });
    const twice = catalog.withheld.find((w) => w.tool === 'twice');
    expect(withheldLine(twice as (typeof catalog.withheld)[number])).toBe(
      `ringfence: withheld files/twice: its inputSchema is refused: pattern "^(\\\\w+) \\\\1$" uses a backreference "\\1", ${linear}. The server's other tools are unaffected; report this one to the server's author.`,
    );
  });
});
