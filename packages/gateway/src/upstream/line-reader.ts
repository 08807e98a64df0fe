/**
 * MCP's stdio framing read from a stream of chunks: one message per line, each line at most
 * `maxLineBytes`. A longer line is not buffered: its bytes are dropped as they come (keeping only
 * its first and last bytes, to tell whose answer it was) and reading goes on after its newline, so
 * one oversized answer costs that call, not the connection. Chunks are kept as a list and joined
 * once per line (the SDK's ReadBuffer re-copies the whole buffer on every chunk).
 */
const KEEP = 256;

export interface LineSink {
  line(bytes: Buffer): void;
  /** A line over the cap was dropped; `head` and `tail` are its first and last bytes. */
  oversized(head: Buffer, tail: Buffer): void;
}

export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private skipping: { head: Buffer; tail: Buffer } | undefined;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer, sink: LineSink): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (this.skipping) this.skipping.tail = lastBytes(Buffer.concat([this.skipping.tail, piece]));
      else if (this.size + piece.length > this.maxLineBytes) {
        const pending = Buffer.concat([...this.chunks, piece]);
        this.skipping = { head: Buffer.from(pending.subarray(0, KEEP)), tail: lastBytes(pending) };
        this.chunks = [];
        this.size = 0;
      } else if (piece.length > 0) {
        this.chunks.push(piece);
        this.size += piece.length;
      }
      if (newline === -1) return;
      if (this.skipping) {
        const { head, tail } = this.skipping;
        this.skipping = undefined;
        sink.oversized(head, tail);
      } else {
        const line = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
        this.chunks = [];
        this.size = 0;
        sink.line(line);
      }
      start = newline + 1;
    }
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.skipping = undefined;
  }
}

function lastBytes(bytes: Buffer): Buffer {
  return bytes.length <= KEEP ? bytes : Buffer.from(bytes.subarray(bytes.length - KEEP));
}

const ID = String.raw`"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,200}")`;
const AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}`);
const AT_END = new RegExp(String.raw`,\s*${ID}\s*\}\s*\r?$`);

/**
 * The JSON-RPC id of a dropped line, when its first or last member is `"id"` (as every SDK writes
 * it); undefined otherwise. A server can name only its own requests here, so a wrong guess costs
 * only that server's own call.
 */
export function droppedLineId(head: Buffer, tail: Buffer): string | number | undefined {
  const match = AT_START.exec(head.toString('utf8')) ?? AT_END.exec(tail.toString('utf8'));
  if (!match) return undefined;
  try {
    const id = JSON.parse(match[1]!) as unknown;
    return typeof id === 'number' || typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
