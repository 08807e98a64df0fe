import { describe, expect, it } from 'vitest';
import { inertMimeType, mediaProblem } from './media.js';

const b64 = (bytes: Buffer) => bytes.toString('base64');
const latin = (text: string) => Buffer.from(text, 'latin1');

/** The start of each type the gateway passes, as its bytes begin. */
const GOOD: readonly [kind: 'image' | 'audio', type: string, start: Buffer][] = [
  ['image', 'image/png', Buffer.from('89504e470d0a1a0a0000000d', 'hex')],
  ['image', 'image/jpeg', Buffer.from('ffd8ffe000104a46', 'hex')],
  ['image', 'image/gif', latin('GIF89a\x01\x00\x01\x00')],
  ['image', 'image/webp', latin('RIFF\x10\x00\x00\x00WEBPVP8 ')],
  ['audio', 'audio/wav', latin('RIFF\x24\x00\x00\x00WAVEfmt ')],
  ['audio', 'audio/x-wav', latin('RIFF\x24\x00\x00\x00WAVEfmt ')],
  ['audio', 'audio/mpeg', latin('ID3\x04\x00\x00\x00\x00\x00\x00')],
  ['audio', 'audio/mpeg', Buffer.from('fffb9064000000000000', 'hex')],
  ['audio', 'audio/ogg', latin('OggS\x00\x02\x00\x00')],
  ['audio', 'audio/webm', Buffer.from('1a45dfa3a3428286', 'hex')],
  ['audio', 'audio/flac', latin('fLaC\x00\x00\x00\x22')],
  ['audio', 'audio/mp4', latin('\x00\x00\x00\x20ftypM4A ')],
];

const SVG = latin('<svg xmlns="http://www.w3.org/2000/svg"><image href="https://evil.example/x"/></svg>');

describe('mediaProblem: one allowlist for every image and audio a client draws or plays', () => {
  it('passes each allowed type whose bytes start as that type does', () => {
    for (const [kind, type, start] of GOOD)
      expect(mediaProblem(kind, type, b64(start)), type).toBeUndefined();
  });

  it('refuses SVG, HTML and every other type, and a type whose bytes are something else', () => {
    expect(mediaProblem('image', 'image/svg+xml', b64(SVG))).toBe(
      'image/svg+xml is not an image type ringfence passes on (only PNG, JPEG, GIF or WebP)',
    );
    for (const type of ['text/html', 'image/bmp', 'image/x-icon', 'IMAGE/PNG', 'image/png; x=1', 'audio/wav'])
      expect(mediaProblem('image', type, b64(GOOD[0]![2])), type).toMatch(/is not an image type/);
    for (const type of ['audio/midi', 'audio/aac', 'audio/ogg; codecs=opus', 'image/png', 'video/mp4'])
      expect(mediaProblem('audio', type, b64(GOOD[4]![2])), type).toMatch(/is not an audio type/);
    // Every allowed type, given SVG's bytes: refused for its data.
    for (const [kind, type] of GOOD)
      expect(mediaProblem(kind, type, b64(SVG)), type).toBe(
        `its data does not start as ${type} ${kind === 'image' ? 'images' : 'audio'} do`,
      );
    // And given another type's bytes.
    expect(mediaProblem('image', 'image/jpeg', b64(GOOD[0]![2]))).toBeDefined();
    expect(mediaProblem('image', 'image/webp', b64(GOOD[4]![2]))).toBeDefined();
    expect(mediaProblem('audio', 'audio/wav', b64(GOOD[3]![2]))).toBeDefined();
    expect(mediaProblem('audio', 'audio/flac', b64(GOOD[8]![2]))).toBeDefined();
    expect(mediaProblem('image', 'image/png', '')).toBeDefined();
  });
});

describe('inertMimeType: what an embedded or read resource is called', () => {
  it('keeps text types a client shows as text, and raster images and audio whose bytes match', () => {
    expect(inertMimeType('text/plain', { text: 'x' })).toBe('text/plain');
    expect(inertMimeType('application/json', { text: '{}' })).toBe('application/json');
    expect(inertMimeType('image/png', { blob: b64(GOOD[0]![2]) })).toBe('image/png');
    expect(inertMimeType('audio/ogg', { blob: b64(latin('OggS\x00')) })).toBe('audio/ogg');
    expect(inertMimeType('application/octet-stream', { blob: 'AAAA' })).toBe('application/octet-stream');
  });

  it('calls HTML, SVG, script and mismatched bytes text/plain or application/octet-stream', () => {
    expect(inertMimeType('text/html', { text: '<script>fetch("https://evil.example")</script>' })).toBe(
      'text/plain',
    );
    expect(inertMimeType('image/svg+xml', { text: SVG.toString('latin1') })).toBe('text/plain');
    expect(inertMimeType('image/svg+xml', { blob: b64(SVG) })).toBe('application/octet-stream');
    expect(inertMimeType('text/html', { blob: b64(latin('<html>')) })).toBe('application/octet-stream');
    expect(inertMimeType('application/pdf', { blob: b64(latin('%PDF-1.7')) })).toBe(
      'application/octet-stream',
    );
    expect(inertMimeType('image/png', { blob: b64(SVG) })).toBe('application/octet-stream');
  });
});
