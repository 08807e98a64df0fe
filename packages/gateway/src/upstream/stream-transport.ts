import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { UpstreamError } from '../ports/errors.js';

/**
 * MCP's stdio framing (one JSON-RPC message per line) over any pair of streams — here the
 * attached stdin and demultiplexed stdout of a container. A line that is not JSON-RPC is
 * reported through `onerror` and skipped; it never reaches the gateway as a message.
 */
export class StreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer: ReadBuffer;
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly onClose?: () => Promise<void> | void,
    /** Largest message (line) the server may send; more drops the connection. */
    maxLineBytes?: number,
  ) {
    this.buffer = new ReadBuffer(maxLineBytes === undefined ? undefined : { maxBufferSize: maxLineBytes });
  }

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (error) {
        // A line over the cap (`answerCapBytes`, 16 MiB by default): the server is flooding; drop the connection.
        this.onerror?.(error as Error);
        void this.close();
        return;
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.input.once('end', () => void this.close());
    this.input.once('close', () => void this.close());
    this.input.on('error', (error: Error) => this.onerror?.(error));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new UpstreamError('UPSTREAM_CLOSED', 'the server connection is closed'));
      this.output.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
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
