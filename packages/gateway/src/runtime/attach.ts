import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';

export interface AttachedStreams {
  /** Write here to reach the container's stdin; end() closes it. */
  readonly stdin: NodeJS.WritableStream;
  readonly stdout: Readable;
  readonly stderr: Readable;
}

/** Docker's frame header on a non-TTY attach: stream type, three zero bytes, payload length (BE). */
const HEADER_BYTES = 8;

/**
 * The attach stream of a container without a TTY carries stdout and stderr as frames. Payload
 * bytes are handed on as they arrive, as views of the chunk read, without waiting for the whole
 * frame: the line framing above joins them and enforces the answer cap, so no frame length a
 * server's output produces is ever buffered here (dockerode's demuxStream re-copies its whole
 * backlog on every chunk and every frame, and goes through a PassThrough per stream).
 */
export class FrameDemux {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerBytes = 0;
  /** Payload bytes still to come in the current frame; its stream is `toStdout`. */
  private remaining = 0;
  private toStdout = true;
  private broken = false;

  constructor(
    private readonly stdout: (bytes: Buffer) => void,
    private readonly stderr: (bytes: Buffer) => void,
    /** A header that is not Docker's: the stream can no longer be split, so nothing more is read. */
    private readonly corrupt: (reason: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length && !this.broken) {
      if (this.remaining === 0) {
        const take = Math.min(HEADER_BYTES - this.headerBytes, chunk.length - offset);
        chunk.copy(this.header, this.headerBytes, offset, offset + take);
        this.headerBytes += take;
        offset += take;
        if (this.headerBytes < HEADER_BYTES) return;
        this.headerBytes = 0;
        const type = this.header[0]!;
        // Never passed on as stdout (as dockerode does): a misread boundary could turn stderr, or
        // a payload's own bytes, into protocol messages.
        if (type > 2 || this.header[1] !== 0 || this.header[2] !== 0 || this.header[3] !== 0) {
          this.broken = true;
          this.corrupt(
            `the engine's attach stream has a frame header that is not Docker's (${this.header.toString('hex')})`,
          );
          return;
        }
        this.toStdout = type === 1;
        this.remaining = this.header.readUInt32BE(4);
        continue;
      }
      const end = Math.min(chunk.length, offset + this.remaining);
      const payload = chunk.subarray(offset, end);
      this.remaining -= payload.length;
      offset = end;
      if (this.toStdout) this.stdout(payload);
      else this.stderr(payload);
    }
  }
}

/** Attach to a created (not yet started) container's stdio, with stdout/stderr demultiplexed. */
export async function attachStdio(docker: Docker, container: Docker.Container): Promise<AttachedStreams> {
  // Not container.attach(): dockerode sends its options as the request body too. Docker ignores
  // the body of an attach; Podman forwards it to the container's stdin, where it would precede
  // the first MCP message (`{"stream":true,…}{"jsonrpc":…}`) and break it. An empty body (sent
  // as a zero-length "file", so the request still goes out before the upgrade) suits both.
  const stream = await new Promise<NodeJS.ReadWriteStream>((resolve, reject) => {
    docker.modem.dial(
      {
        path: `/containers/${container.id}/attach?`,
        method: 'POST',
        isStream: true,
        hijack: true,
        openStdin: true,
        file: Buffer.alloc(0),
        statusCodes: { 101: true, 200: true, 404: 'no such container', 500: 'server error' },
        options: { stream: true, stdin: true, stdout: true, stderr: true },
      },
      (error, attached) => (error ? reject(error) : resolve(attached as NodeJS.ReadWriteStream)),
    );
  });
  // Their readers take every chunk as it is pushed ('data'); like the PassThrough streams before,
  // they do not hold the container back: the answer cap bounds what is kept.
  const stdout = new Readable({ read() {} });
  const stderr = new Readable({ read() {} });
  // A break before the upstream reads stdout must not crash the gateway as an unheard 'error':
  // the reader finds it in `stdout.errored` (ContainerUpstream.start checks it).
  stdout.on('error', () => {});
  let finished = false;
  const finish = (error?: Error) => {
    if (finished) return;
    finished = true;
    stream.removeListener('data', onData);
    if (error) {
      stdout.destroy(error);
      stderr.push(null);
      return;
    }
    stdout.push(null);
    stderr.push(null);
  };
  const demux = new FrameDemux(
    (bytes) => stdout.push(bytes),
    (bytes) => stderr.push(bytes),
    (reason) => {
      finish(new GatewayError('ATTACH_FRAMING', reason));
      (stream as NodeJS.ReadWriteStream & { destroy?: () => void }).destroy?.();
    },
  );
  const onData = (chunk: Buffer) => demux.push(chunk);
  stream.on('data', onData);
  stream.once('end', () => finish());
  stream.once('close', () => finish());
  // A broken connection to the engine is not the server closing its output: stdout fails with
  // the reason, so the calls in flight and the server's state say the connection broke.
  stream.on('error', (error: Error) => finish(error));
  return { stdin: stream, stdout, stderr };
}
