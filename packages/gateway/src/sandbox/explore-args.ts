import { sandboxName } from './args.js';
import { SandboxError } from './errors.js';
import { EXPLORE_LIMITS } from './explore-limits.js';

export { EXPLORE_LIMITS };

/**
 * The arguments of the copy-and-explore tools (sandbox_fork, sandbox_explore, sandbox_read_file,
 * sandbox_write_file), read again here after the pipeline's schema check: this code reads and
 * writes inside containers, so it trusts only what it checked itself.
 */

export interface ForkRequest {
  readonly name: string;
  readonly newName: string;
}

export interface ExploreRequest {
  readonly name: string;
  readonly path: string;
  readonly depth: number;
  readonly maxEntries: number;
}

export interface ReadFileRequest {
  readonly name: string;
  readonly path: string;
  readonly offset: number;
  readonly maxBytes: number;
}

export interface WriteFileRequest {
  readonly name: string;
  readonly path: string;
  readonly content: Buffer;
  readonly mode: number;
}

const refuse = (message: string): never => {
  throw new SandboxError('SANDBOX_ARGUMENTS', message);
};

function onlyKeys(args: Record<string, unknown>, allowed: readonly string[], tool: string): void {
  for (const key of Object.keys(args))
    if (!allowed.includes(key)) refuse(`${tool} takes no argument "${key}"; it takes ${allowed.join(', ')}.`);
}

function integer(value: unknown, min: number, max: number, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    return refuse(`${what} must be a whole number from ${min} to ${max}.`);
  return value;
}

/**
 * An absolute path inside the sandbox, with no ".." component (a path is named plainly, never
 * climbed out of) and no NUL; "." and empty components are dropped. "/" stays "/".
 */
export function sandboxPath(value: unknown, what = 'path'): string {
  if (typeof value !== 'string' || !value.startsWith('/'))
    return refuse(`${what} must be an absolute path inside the sandbox, such as /tmp/notes.txt.`);
  if (value.length > EXPLORE_LIMITS.pathLength)
    return refuse(`${what} is longer than ${EXPLORE_LIMITS.pathLength} characters.`);
  if (value.includes('\0')) return refuse(`${what} contains a NUL character.`);
  const parts = value.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..'))
    return refuse(
      `${what} must not contain ".."; name the path it means directly (such as /tmp/a, not /tmp/b/../a).`,
    );
  return `/${parts.join('/')}`;
}

export function parseFork(args: Record<string, unknown>): ForkRequest {
  onlyKeys(args, ['name', 'new_name'], 'sandbox_fork');
  const name = sandboxName(args.name);
  const newName = sandboxName(args.new_name);
  if (newName === name) refuse('new_name must differ from name: a fork is a second sandbox.');
  return { name, newName };
}

export function parseExplore(args: Record<string, unknown>): ExploreRequest {
  onlyKeys(args, ['name', 'path', 'depth', 'max_entries'], 'sandbox_explore');
  return {
    name: sandboxName(args.name),
    path: sandboxPath(args.path ?? '/'),
    depth: integer(args.depth, 1, EXPLORE_LIMITS.depth.max, EXPLORE_LIMITS.depth.default, 'depth'),
    maxEntries: integer(
      args.max_entries,
      1,
      EXPLORE_LIMITS.entries.max,
      EXPLORE_LIMITS.entries.default,
      'max_entries',
    ),
  };
}

export function parseReadFile(args: Record<string, unknown>): ReadFileRequest {
  onlyKeys(args, ['name', 'path', 'offset', 'max_bytes'], 'sandbox_read_file');
  const name = sandboxName(args.name);
  const path = sandboxPath(args.path);
  if (path === '/') refuse('path names a directory; see it with sandbox_explore.');
  return {
    name,
    path,
    offset: integer(args.offset, 0, Number.MAX_SAFE_INTEGER, 0, 'offset'),
    maxBytes: integer(
      args.max_bytes,
      1,
      EXPLORE_LIMITS.readBytes.max,
      EXPLORE_LIMITS.readBytes.default,
      'max_bytes',
    ),
  };
}

/** Strict base64 (the standard alphabet, padded as it should be): anything else is refused, not guessed at. */
function base64(text: string): Buffer {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text))
    return refuse('content is not base64 (standard alphabet, padded); send it so, or use encoding "utf8".');
  return Buffer.from(text, 'base64');
}

export function parseWriteFile(args: Record<string, unknown>): WriteFileRequest {
  onlyKeys(args, ['name', 'path', 'content', 'encoding', 'mode'], 'sandbox_write_file');
  const name = sandboxName(args.name);
  if (typeof args.path === 'string' && args.path.length > 1 && args.path.endsWith('/'))
    refuse('path must name a file, not a directory (it ends with "/").');
  const path = sandboxPath(args.path);
  if (path === '/') refuse('path must name a file, such as /tmp/notes.txt.');
  const fileName = path.slice(path.lastIndexOf('/') + 1);
  if (Buffer.byteLength(fileName) > EXPLORE_LIMITS.nameBytes)
    refuse(
      `the file name is longer than ${EXPLORE_LIMITS.nameBytes} bytes, which no Linux file system takes.`,
    );
  const encoding = args.encoding ?? 'utf8';
  if (encoding !== 'utf8' && encoding !== 'base64') refuse('encoding is "utf8" or "base64".');
  if (typeof args.content !== 'string')
    refuse('content must be a string (text, or base64 with encoding "base64").');
  const text = args.content as string;
  // Measured before decoding, so an oversized argument is never copied.
  const size = encoding === 'base64' ? Math.floor((text.length * 3) / 4) : Buffer.byteLength(text, 'utf8');
  if (size > EXPLORE_LIMITS.writeBytes + 2)
    refuse(
      `content is about ${size} bytes, more than the ${EXPLORE_LIMITS.writeBytes} bytes (10 MiB) one write takes; write a smaller file, or share a directory with the mounts of sandbox_create instead.`,
    );
  const content = encoding === 'base64' ? base64(text) : Buffer.from(text, 'utf8');
  if (content.length > EXPLORE_LIMITS.writeBytes)
    refuse(
      `content is ${content.length} bytes, more than the ${EXPLORE_LIMITS.writeBytes} bytes (10 MiB) one write takes; write a smaller file, or share a directory with the mounts of sandbox_create instead.`,
    );
  const mode = integer(args.mode, 0, 0o777, 0o644, 'mode (permission bits only, such as 420 for 0644)');
  return { name, path, content, mode };
}
