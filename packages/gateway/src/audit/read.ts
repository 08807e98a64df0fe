import type { FileHandle } from 'node:fs/promises';
import { AuditError } from './errors.js';
import { MAX_LINE_BYTES } from './types.js';

const CHUNK = 64 * 1024;

export class LineTooLongError extends AuditError {
  constructor(message: string) {
    super('AUDIT_LINE_TOO_LONG', message);
  }
}

/** Reads exactly `buffer.length` bytes at `position`, or fewer if the file ends first. */
export async function readAt(handle: FileHandle, buffer: Buffer, position: number): Promise<number> {
  let done = 0;
  while (done < buffer.length) {
    const { bytesRead } = await handle.read(buffer, done, buffer.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

/**
 * The newline-separated segments of the first `end` bytes of a file, last first. The first
 * segment yielded is what follows the final newline: empty for a well-formed log, a torn fragment
 * otherwise. Reads backwards in chunks, so the cost is proportional to what the caller consumes.
 *
 * @throws {LineTooLongError} when one segment exceeds {@link MAX_LINE_BYTES}.
 */
export async function* segmentsFromEnd(handle: FileHandle, end: number): AsyncGenerator<Buffer> {
  let position = end;
  let carry: Buffer[] = [];
  let carried = 0;
  while (position > 0) {
    const length = Math.min(CHUNK, position);
    position -= length;
    const chunk = Buffer.alloc(length);
    const got = await readAt(handle, chunk, position);
    if (got !== length) throw new AuditError('AUDIT_READ_FAILED', 'the file shrank while it was being read');
    let cut = length;
    for (let i = length - 1; i >= 0; i--) {
      if (chunk[i] !== 0x0a) continue;
      yield Buffer.concat([chunk.subarray(i + 1, cut), ...carry]);
      carry = [];
      carried = 0;
      cut = i;
    }
    if (cut > 0) {
      carry.unshift(chunk.subarray(0, cut));
      carried += cut;
      if (carried > MAX_LINE_BYTES)
        throw new LineTooLongError(`a line is longer than ${MAX_LINE_BYTES} bytes`);
    }
  }
  yield Buffer.concat(carry);
}

/** Splits appended bytes into complete lines, holding back a partial last line for the next call. */
export class LineSplitter {
  private rest: Buffer = Buffer.alloc(0);

  push(data: Buffer): Buffer[] {
    const buffer = this.rest.length > 0 ? Buffer.concat([this.rest, data]) : data;
    const lines: Buffer[] = [];
    let start = 0;
    for (let i = buffer.indexOf(0x0a); i !== -1; i = buffer.indexOf(0x0a, start)) {
      lines.push(buffer.subarray(start, i));
      start = i + 1;
    }
    this.rest = Buffer.from(buffer.subarray(start));
    if (this.rest.length > MAX_LINE_BYTES)
      throw new LineTooLongError(`a line is longer than ${MAX_LINE_BYTES} bytes`);
    return lines;
  }

  /** Bytes after the last newline seen so far (a line still being written, or a torn one). */
  get pending(): Buffer {
    return this.rest;
  }
}
