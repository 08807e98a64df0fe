import {
  type JSONRPCMessage,
  type JSONRPCResultResponse,
  parseJSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { UpstreamError } from '../ports/errors.js';
import { droppedLineId, LineReader } from './line-reader.js';
import { plainResultResponse } from './wire-check.js';

/**
 * MCP's stdio framing (one JSON-RPC message per line) over any pair of streams — here the
 * attached stdin and demultiplexed stdout of a container. A line that is not JSON-RPC is
 * reported through `onerror` and skipped; it never reaches the gateway as a message. A line over
 * the cap is dropped as it comes: the request it answers (when its id can be read) fails with
 * that reason, and the connection stays.
 */
export class StreamTransport implements Transport {
  /**
   * The SDK's era probe tells a local pipe from HTTP by the presence of these two members (it
   * reads neither). As a pipe, a server silent on `server/discover` is a 2025 server and the
   * connection falls back to `initialize` on the same stream, where as "HTTP" silence would be an
   * outage and the connect would fail. (The container's own stderr is kept by the runtime.)
   */
  readonly stderr = null;
  readonly pid = undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * Where a plain result answer goes once the client is connected (`wire-check.ts`): straight to
   * the SDK's response dispatch, parsed once. Unset, or for any other message, `onmessage` as ever.
   */
  onresponse?: (message: JSONRPCResultResponse) => void;
  private readonly buffer: LineReader;
  private readonly maxLineBytes: number;
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly onClose?: () => Promise<void> | void,
    /** Largest message (line) the server may send; a longer one is dropped. Default 16 MiB. */
    maxLineBytes = 16 * 1024 * 1024,
  ) {
    this.maxLineBytes = maxLineBytes;
    this.buffer = new LineReader(maxLineBytes);
  }

  async start(): Promise<void> {
    const sink = {
      line: (bytes: Buffer) => {
        let message: JSONRPCMessage;
        let answer: JSONRPCResultResponse | undefined;
        try {
          // A CRLF line: the CR is cut from the bytes (a regex over the text would scan all of it).
          const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
          // The SDK's deserializeMessage, with the JSON parsed once whichever way it goes on.
          const value: unknown = JSON.parse(bytes.toString('utf8', 0, end));
          answer = this.onresponse ? plainResultResponse(value) : undefined;
          message = answer ?? parseJSONRPCMessage(value);
        } catch (error) {
          this.onerror?.(error as Error);
          return;
        }
        if (answer && this.onresponse) this.onresponse(answer);
        else this.onmessage?.(message);
      },
      oversized: (head: Buffer, tail: Buffer) => {
        const what = `the server's answer exceeded ${this.maxLineBytes} bytes; it was dropped (the server is kept)`;
        const id = droppedLineId(head, tail);
        if (id === undefined) {
          this.onerror?.(
            new UpstreamError('UPSTREAM_ANSWER_TOO_LARGE', `${what}, and whose answer it was is unknown`),
          );
          return;
        }
        this.onmessage?.({ jsonrpc: '2.0', id, error: { code: -32603, message: what } });
      },
    };
    this.input.on('data', (chunk: Buffer) => {
      if (!this.closed) this.buffer.push(chunk, sink);
    });
    this.input.once('end', () => void this.close());
    this.input.once('close', () => void this.close());
    this.input.on('error', (error: Error) => this.onerror?.(error));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new UpstreamError('UPSTREAM_CLOSED', 'the server connection is closed'));
      // One write per message, newline included (the SDK's serializeMessage).
      this.output.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    await this.onClose?.();
    this.onclose?.();
  }
}
