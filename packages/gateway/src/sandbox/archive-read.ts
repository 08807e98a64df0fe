import { renderUntrusted } from '../text/index.js';
import { SandboxError } from './errors.js';
import { type TarHandlers, TarReader } from './tar-read.js';

/** Bounds on one archive read, whatever its caller wants from it. */
export interface ScanLimits {
  /** Stream bytes read at most (headers, bodies skipped or not). */
  readonly bytes: number;
  /** Headers read at most. */
  readonly entries: number;
  /** Milliseconds at most. */
  readonly ms: number;
}

export const SCAN_LIMITS: ScanLimits = { bytes: 512 * 1024 * 1024, entries: 100_000, ms: 30_000 };

export interface ScanOutcome {
  /** Why reading stopped before the archive's end, if it did. */
  readonly cut?: 'scan-bytes' | 'scan-entries' | 'scan-time' | 'done';
  readonly entriesSeen: number;
  readonly bytesRead: number;
}

/**
 * Reads a tar stream from the engine through `TarReader` until the archive ends, the caller says
 * it is done (`handlers` returns through `stop`), or a scan limit is reached; then the stream is
 * destroyed at once, so the engine stops sending (no more of the sandbox's files are read).
 */
export async function scanArchive(
  stream: NodeJS.ReadableStream,
  handlers: (stop: () => void) => TarHandlers,
  limits: ScanLimits = SCAN_LIMITS,
): Promise<ScanOutcome> {
  const readable = stream as NodeJS.ReadableStream & { destroy?: () => void };
  let cut: ScanOutcome['cut'];
  let entriesSeen = 0;
  const stop = () => {
    cut ??= 'done';
  };
  const given = handlers(stop);
  const reader = new TarReader({
    ...given,
    entry: (entry) => {
      // One chunk may hold many entries: none is handed on once reading is to stop.
      if (cut) return false;
      entriesSeen += 1;
      if (entriesSeen > limits.entries) {
        cut ??= 'scan-entries';
        return false;
      }
      return given.entry(entry);
    },
  });
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      readable.removeListener('data', onData);
      readable.destroy?.();
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => {
      cut ??= 'scan-time';
      finish();
    }, limits.ms);
    const onData = (chunk: Buffer) => {
      if (settled) return;
      try {
        reader.write(chunk);
      } catch (error) {
        finish(error);
        return;
      }
      if (reader.consumed >= limits.bytes && !reader.ended) cut ??= 'scan-bytes';
      if (cut || reader.ended) finish();
    };
    readable.on('data', onData);
    readable.once('end', () => finish());
    readable.once('close', () => finish());
    readable.once('error', (error: Error) =>
      finish(
        cut
          ? undefined
          : new SandboxError('SANDBOX_ARCHIVE', `reading the sandbox's files failed: ${error.message}`, {
              cause: error,
            }),
      ),
    );
  });
  return { ...(cut ? { cut } : {}), entriesSeen, bytesRead: reader.consumed };
}

/**
 * A name from the sandbox's file system as a person or an assistant may be shown it: bytes that
 * are not UTF-8 become lone surrogates U+DC80-U+DCFF (one per byte, so no two names show alike),
 * then the line rule of docs/untrusted-text.md escapes every control, format, invisible and
 * lone-surrogate character as `\u{HEX}`.
 */
export function shownName(bytes: Buffer): { text: string; utf8: boolean } {
  try {
    return {
      text: renderUntrusted(new TextDecoder('utf-8', { fatal: true }).decode(bytes), { mode: 'line' }).text,
      utf8: true,
    };
  } catch {
    let text = '';
    let at = 0;
    while (at < bytes.length) {
      const length = utf8SequenceLength(bytes, at);
      if (length > 0) {
        text += bytes.subarray(at, at + length).toString('utf8');
        at += length;
      } else {
        text += String.fromCharCode(0xdc00 + bytes[at]!);
        at += 1;
      }
    }
    return { text: renderUntrusted(text, { mode: 'line' }).text, utf8: false };
  }
}

/** The length of the well-formed UTF-8 sequence at `at`, or 0 when there is none. */
export function utf8SequenceLength(bytes: Buffer, at: number): number {
  const first = bytes[at]!;
  const length =
    first < 0x80
      ? 1
      : first >= 0xc2 && first <= 0xdf
        ? 2
        : first >= 0xe0 && first <= 0xef
          ? 3
          : first >= 0xf0 && first <= 0xf4
            ? 4
            : 0;
  if (length === 0 || at + length > bytes.length) return 0;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(at, at + length));
    return length;
  } catch {
    return 0;
  }
}
