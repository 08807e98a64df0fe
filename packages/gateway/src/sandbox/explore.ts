import { mayAccess, ownership, READ, type SandboxUser, SEARCH } from './access.js';
import { SCAN_LIMITS, type ScanLimits, type ScanOutcome, scanArchive, shownName } from './archive-read.js';
import type { ExploreRequest, ReadFileRequest } from './explore-args.js';
import type { TarEntry } from './tar-read.js';

/**
 * sandbox_explore and sandbox_read_file: both read the engine's archive of a path in the
 * sandbox (`GET /containers/{id}/archive`), which the engine makes from the container's file
 * system itself. Nothing runs in the sandbox (it may have no shell, or be stopped), a symbolic
 * link is reported as a link and never followed (the engine archives the link itself), and the
 * stream is destroyed the moment a cap is reached.
 */

export interface ExploredEntry {
  readonly path: string;
  readonly type: TarEntry['type'];
  readonly size: number;
  /** Permission bits, in octal, such as "0644". */
  readonly mode: string;
  readonly link_target?: string;
  /** The name is not UTF-8: its other bytes are shown as \u{DC80}-\u{DCFF}. */
  readonly name_not_utf8?: true;
  /** The archive named it outside the path asked for (an engine never does): shown, not trusted. */
  readonly odd_name?: true;
  /** A directory the sandbox's user may not list: its contents are not shown. */
  readonly unreadable?: true;
}

export interface ExploreResult {
  readonly path: string;
  readonly type: TarEntry['type'] | 'missing';
  readonly link_target?: string;
  readonly entries: ExploredEntry[];
  readonly depth: number;
  readonly max_entries: number;
  /** Why the listing stops short, when it does. */
  readonly truncated?: string;
  readonly scanned_entries: number;
  /** Tmpfs mounts below the path, whose contents the archive does not hold (see fs-view.ts). */
  readonly not_shown?: string;
  /** The path is a directory the sandbox's user may not list. */
  readonly unreadable?: string;
}

export interface ExploreOptions {
  readonly limits?: ScanLimits;
  /** Mount points below the path whose contents are skipped (the archive sees beneath them). */
  readonly hidden?: readonly string[];
  /** Whose permissions count: directories this user may not list are shown closed. */
  readonly user?: SandboxUser;
}

const octalMode = (mode: number) => mode.toString(8).padStart(4, '0');

/** The part of an archive entry's name below the path asked for, or undefined when it is not below it. */
export function relativeName(name: Buffer, requested: string): Buffer | undefined {
  let text = name;
  while (text.length > 1 && text[text.length - 1] === 0x2f) text = text.subarray(0, text.length - 1);
  if (requested === '/') {
    if (text.length === 1 && (text[0] === 0x2f || text[0] === 0x2e)) return Buffer.alloc(0);
    if (text.subarray(0, 2).toString('latin1') === './') return text.subarray(2);
    return text[0] === 0x2f ? text.subarray(1) : text;
  }
  const base = Buffer.from(requested.slice(requested.lastIndexOf('/') + 1), 'utf8');
  if (text.equals(base)) return Buffer.alloc(0);
  if (text.length > base.length && text.subarray(0, base.length).equals(base) && text[base.length] === 0x2f)
    return text.subarray(base.length + 1);
  return undefined;
}

function depthOf(relative: Buffer): number {
  let depth = 1;
  for (const byte of relative) if (byte === 0x2f) depth += 1;
  return depth;
}

const hasDotDot = (relative: Buffer) => relative.toString('latin1').split('/').includes('..');

function described(entry: TarEntry, fullName: Buffer, odd: boolean): ExploredEntry {
  const name = shownName(fullName);
  const target = entry.linkName.length > 0 ? shownName(entry.linkName) : undefined;
  return {
    path: name.text,
    type: entry.type,
    size: entry.size,
    mode: octalMode(entry.mode),
    ...(target ? { link_target: target.text } : {}),
    ...(name.utf8 && (target?.utf8 ?? true) ? {} : { name_not_utf8: true as const }),
    ...(odd ? { odd_name: true as const } : {}),
  };
}

const CUT_REASON: Record<NonNullable<ScanOutcome['cut']>, string> = {
  done: 'max_entries reached; there may be more: raise max_entries or explore a deeper path',
  'scan-entries': `the engine's archive has more than ${SCAN_LIMITS.entries} entries; explore a deeper path`,
  'scan-bytes': `more than ${SCAN_LIMITS.bytes} bytes of the archive were read; explore a deeper path`,
  'scan-time': `reading took more than ${SCAN_LIMITS.ms / 1000} s; explore a deeper path`,
};

/**
 * The tree under `request.path`, in the engine's walk order, down to `depth` levels and at most
 * `maxEntries` entries. Entries deeper than `depth` are skipped but still read past (the archive
 * holds them in walk order), so the scan itself is capped too (`limits`).
 */
export async function exploreTree(
  archive: NodeJS.ReadableStream,
  request: Pick<ExploreRequest, 'path' | 'depth' | 'maxEntries'>,
  options: ExploreOptions = {},
): Promise<ExploreResult> {
  const { limits = SCAN_LIMITS, hidden = [], user } = options;
  const entries: ExploredEntry[] = [];
  /** Directories (as `prefix/`) the user may not list: nothing below them is shown. */
  const closed: Buffer[] = [];
  const listable = (entry: TarEntry) =>
    entry.type !== 'directory' || user === undefined || mayAccess(entry, user, READ | SEARCH);
  let root: TarEntry | undefined;
  const prefix = Buffer.from(request.path === '/' ? '/' : `${request.path}/`, 'utf8');
  const outcome = await scanArchive(
    archive,
    (stop) => ({
      entry: (entry) => {
        const relative = relativeName(entry.name, request.path);
        if (relative !== undefined && relative.length === 0) {
          root ??= entry;
          if (!listable(entry)) stop();
          return false;
        }
        const odd = relative === undefined || hasDotDot(relative);
        if (!odd && depthOf(relative) > request.depth) return false;
        const full = odd ? entry.name : Buffer.concat([prefix, relative]);
        const text = full.toString('utf8');
        if (!odd && hidden.some((mount) => text.startsWith(`${mount}/`))) return false;
        if (closed.some((dir) => full.subarray(0, dir.length).equals(dir))) return false;
        const open = listable(entry);
        if (!open) closed.push(Buffer.concat([full, Buffer.from('/')]));
        entries.push({ ...described(entry, full, odd), ...(open ? {} : { unreadable: true as const }) });
        if (entries.length >= request.maxEntries) stop();
        return false;
      },
    }),
    limits,
  );
  const target = root && root.linkName.length > 0 ? shownName(root.linkName).text : undefined;
  const rootClosed = root !== undefined && !listable(root);
  const reason = outcome.cut && !rootClosed ? CUT_REASON[outcome.cut] : undefined;
  return {
    path: shownName(Buffer.from(request.path, 'utf8')).text,
    type: root?.type ?? (entries.length > 0 ? 'directory' : 'missing'),
    ...(target ? { link_target: target } : {}),
    entries,
    depth: request.depth,
    max_entries: request.maxEntries,
    ...(reason ? { truncated: reason } : {}),
    scanned_entries: outcome.entriesSeen,
    ...(rootClosed && root
      ? {
          unreadable: `the sandbox's user may not list it (${ownership(root)}); ringfence shows only what it could.`,
        }
      : {}),
    ...(hidden.length > 0
      ? {
          not_shown: `${hidden.join(', ')}: a tmpfs, whose files the engine's archive API does not see; list them with sandbox_run.`,
        }
      : {}),
  };
}

export interface ReadFileResult {
  readonly path: string;
  readonly type: TarEntry['type'] | 'missing';
  readonly size?: number;
  readonly mode?: string;
  readonly link_target?: string;
  readonly offset?: number;
  readonly bytes_returned?: number;
  /** Whether bytes of the file follow those returned. */
  readonly more?: boolean;
  readonly encoding?: 'utf8' | 'base64';
  readonly content?: string;
  readonly note?: string;
}

/**
 * One file's bytes from `offset`, at most `maxBytes`; the stream is destroyed as soon as they are
 * in. A directory, a link or anything else gets its description and no bytes: a link's target
 * is told, never followed.
 */
export async function readFileBytes(
  archive: NodeJS.ReadableStream,
  request: Pick<ReadFileRequest, 'path' | 'offset' | 'maxBytes'>,
  options: { readonly limits?: ScanLimits; readonly user?: SandboxUser } = {},
): Promise<ReadFileResult> {
  const limits = options.limits ?? { ...SCAN_LIMITS, bytes: Number.MAX_SAFE_INTEGER };
  const user = options.user;
  const readable = (entry: TarEntry) => user === undefined || mayAccess(entry, user, READ);
  let found: TarEntry | undefined;
  const parts: Buffer[] = [];
  let kept = 0;
  let seen = 0;
  const outcome = await scanArchive(
    archive,
    (stop) => ({
      entry: (entry) => {
        // The first entry is the path itself; a directory's contents follow it, unread.
        found = entry;
        if (entry.type !== 'file' || request.offset >= entry.size || !readable(entry)) {
          stop();
          return false;
        }
        return true;
      },
      data: (bytes) => {
        const start = Math.max(0, request.offset - seen);
        seen += bytes.length;
        if (start >= bytes.length) return;
        const take = bytes.subarray(start, start + (request.maxBytes - kept));
        parts.push(Buffer.from(take));
        kept += take.length;
        if (kept >= request.maxBytes) stop();
      },
      entryEnd: stop,
    }),
    limits,
  );
  const path = shownName(Buffer.from(request.path, 'utf8')).text;
  if (!found) return { path, type: 'missing', note: 'the engine sent no entry for this path.' };
  const base = { path, type: found.type, size: found.size, mode: octalMode(found.mode) };
  if (found.type === 'directory') return { ...base, note: 'a directory: see its tree with sandbox_explore.' };
  if (found.type === 'symlink' || found.type === 'hardlink')
    return {
      ...base,
      link_target: shownName(found.linkName).text,
      note: 'a link: it is not followed. Read its target by naming it, if that is what you mean.',
    };
  if (found.type !== 'file') return { ...base, note: `not a regular file (tar type "${found.typeflag}").` };
  if (!readable(found))
    return {
      ...base,
      note: `the sandbox's user may not read it (${ownership(found)}); ringfence reads only what the sandbox could.`,
    };
  if (outcome.cut === 'scan-time' && kept < request.maxBytes && request.offset + kept < found.size)
    return { ...base, note: `reading took more than ${limits.ms / 1000} s; read from a smaller offset.` };
  let bytes = Buffer.concat(parts);
  const more = request.offset + bytes.length < found.size;
  let encoding: 'utf8' | 'base64' = 'utf8';
  let text = utf8(bytes);
  // A cut may split one character: give back the whole ones, the next read starts at the cut one.
  const split = more ? incompleteTail(bytes) : 0;
  if (text === undefined && split > 0) {
    const shorter = utf8(bytes.subarray(0, bytes.length - split));
    if (shorter !== undefined) {
      bytes = bytes.subarray(0, bytes.length - split);
      text = shorter;
    }
  }
  if (text === undefined) encoding = 'base64';
  return {
    ...base,
    offset: request.offset,
    bytes_returned: bytes.length,
    more: request.offset + bytes.length < found.size,
    encoding,
    content: text ?? bytes.toString('base64'),
  };
}

/** How many bytes at the end begin a UTF-8 character they do not finish (0 to 3). */
export function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
