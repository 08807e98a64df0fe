/**
 * Which images and sounds a server's content may carry, wherever a client draws or plays it: an
 * icon (`icons.ts`), an `image` or `audio` item of a tool result or a prompt message
 * (`pipeline/sanitise.ts`), an image or audio block of a sampling request
 * (`server-request-params.ts`). One list, one check.
 *
 * An image passes only when it is a raster type a client draws from its bytes alone (PNG, JPEG,
 * GIF, WebP) and its bytes start as that type does: SVG is refused (an SVG image may load other
 * URLs and run script), and so is any other type (a client may hand an unknown type to a
 * renderer that fetches). Audio passes only as WAV, MP3, Ogg, WebM, FLAC or MP4 audio whose bytes
 * start with that container's signature. The type is matched exactly, lower-case and without
 * parameters (`audio/ogg; codecs=opus` is refused), as the client will dispatch on it.
 */

type Signature = (bytes: Buffer) => boolean;

const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');
const riff =
  (form: string): Signature =>
  (b) =>
    ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === form;

/** Raster image types a client can draw from bytes alone, each with the bytes its data starts with. */
export const RASTER_IMAGES: Readonly<Record<string, Signature>> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/gif': (b) => ['GIF87a', 'GIF89a'].includes(ascii(b, 0, 6)),
  'image/webp': riff('WEBP'),
};

/** An MPEG audio frame starts with 11 set bits (the frame sync); an MP3 file may start with an ID3 tag. */
const mpeg: Signature = (b) => ascii(b, 0, 3) === 'ID3' || (b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0);

/** Audio types a client plays from bytes alone, each with the signature its container starts with. */
export const AUDIO: Readonly<Record<string, Signature>> = {
  'audio/wav': riff('WAVE'),
  'audio/x-wav': riff('WAVE'),
  'audio/mpeg': mpeg,
  'audio/ogg': (b) => ascii(b, 0, 4) === 'OggS',
  'audio/webm': (b) => b.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3])),
  'audio/flac': (b) => ascii(b, 0, 4) === 'fLaC',
  'audio/mp4': (b) => ascii(b, 4, 8) === 'ftyp',
};

export type MediaKind = 'image' | 'audio';

const ALLOWED: Readonly<Record<MediaKind, { types: Readonly<Record<string, Signature>>; names: string }>> = {
  image: { types: RASTER_IMAGES, names: 'PNG, JPEG, GIF or WebP' },
  audio: { types: AUDIO, names: 'WAV, MP3, Ogg, WebM, FLAC or MP4' },
};

/** The names of the types `kind` may be, for a message: "PNG, JPEG, GIF or WebP". */
export const allowedNames = (kind: MediaKind): string => ALLOWED[kind].names;

/** The first bytes of base64 `data`: enough for every signature, without decoding a large image. */
function head(data: string): Buffer {
  return Buffer.from(data.slice(0, 64), 'base64');
}

/**
 * Why `kind` content of this type and data is not passed on, or undefined when it is. The reason
 * holds the type as sent: whoever shows it renders it.
 */
export function mediaProblem(kind: MediaKind, mimeType: string, data: string | Buffer): string | undefined {
  const { types, names } = ALLOWED[kind];
  const starts = Object.hasOwn(types, mimeType) ? types[mimeType] : undefined;
  if (!starts) return `${mimeType} is not an ${kind} type ringfence passes on (only ${names})`;
  return starts(typeof data === 'string' ? head(data) : data)
    ? undefined
    : `its data does not start as ${mimeType} ${kind === 'image' ? 'images' : 'audio'} do`;
}

/** `mediaProblem` for the `kind` a MIME type names (`image/…`, `audio/…`), else undefined. */
export function mediaKindOf(mimeType: string): MediaKind | undefined {
  if (Object.hasOwn(RASTER_IMAGES, mimeType)) return 'image';
  if (Object.hasOwn(AUDIO, mimeType)) return 'audio';
  return undefined;
}

/**
 * Text types a client shows as text. An embedded resource or a read resource keeps its
 * `mimeType` only when it is one of these (for text) or a raster image, audio whose bytes match
 * it, or `application/octet-stream` (for a blob); otherwise the gateway names its text
 * `text/plain` and its blob `application/octet-stream`, so a client that dispatches on the type
 * never hands the server's bytes to an HTML, SVG, PDF or script renderer.
 */
const INERT_TEXT = new Set(['text/plain', 'text/markdown', 'text/csv', 'application/json']);

/** The `mimeType` a client is given for resource contents the server called `mimeType`. */
export function inertMimeType(mimeType: string, contents: { text?: unknown; blob?: unknown }): string {
  if (typeof contents.text === 'string') return INERT_TEXT.has(mimeType) ? mimeType : 'text/plain';
  const kind = mediaKindOf(mimeType);
  if (kind && typeof contents.blob === 'string' && mediaProblem(kind, mimeType, contents.blob) === undefined)
    return mimeType;
  return 'application/octet-stream';
}
