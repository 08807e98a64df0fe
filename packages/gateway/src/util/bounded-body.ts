import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.js';

/** What a bounded read of an HTTP message's body gave. */
export type BoundedBody =
  | { readonly tooLarge: false; readonly body: Buffer }
  /** `declared`: the Content-Length that refused it unread, when that is what did. */
  | { readonly tooLarge: true; readonly declared?: number };

/**
 * The whole body of an HTTP message (a request to the served endpoint, an answer from a remote
 * server), at most `max` bytes: a declared length over it is refused unread, and a body that goes
 * over stops being read there, so no more than `max` bytes are ever held. What follows a refusal
 * is the caller's to decide (the served endpoint drains the rest so its 413 reaches the client,
 * the upstream client drops the connection): the message is left paused. Rejects with the
 * message's error, or a plain one, when the body ends short.
 */
export function readBoundedBody(message: IncomingMessage, max: number): Promise<BoundedBody> {
  const declared = message.headers['content-length'];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > max) {
    message.pause();
    return Promise.resolve({ tooLarge: true, declared: Number(declared) });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failure: Error | undefined;
    let over = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      over = true;
      message.off('data', onData);
      message.pause();
      resolve({ tooLarge: true });
    };
    message.on('data', onData);
    message.on('error', (error) => {
      failure = error;
    });
    message.once('end', () => {
      if (!over)
        resolve({ tooLarge: false, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    });
    message.once('close', () => {
      if (!message.complete && !over)
        reject(failure ?? new GatewayError('CLOSED_EARLY', 'closed before the body ended'));
    });
  });
}
