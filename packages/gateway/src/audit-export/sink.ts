import { readFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { ExportError } from './errors.js';
import type { ExportTarget } from './target.js';

/**
 * Where exported records go. `durable`: a resolved `write` means the records are on the
 * collector's storage (a file, after fdatasync). A stream sink has no application-level
 * acknowledgement (plain syslog over TCP has none): a resolved `write` only means the bytes were
 * handed to the kernel, so the exporter holds its position back until the connection has stayed
 * up a while after them, or the collector closed its side after reading everything (`finish`).
 */
export interface ExportSink {
  readonly durable: boolean;
  /** false once the connection broke (the collector closed, reset, or an error). */
  readonly alive: boolean;
  open(): Promise<void>;
  write(frames: readonly Buffer[]): Promise<void>;
  /** Ends the stream; true when the collector read everything and closed its side. */
  finish(timeoutMs: number): Promise<boolean>;
  destroy(): void;
}

export function sinkFor(target: ExportTarget): ExportSink {
  return target.kind === 'file' ? new FileSink(target.path) : new StreamSink(target);
}

class FileSink implements ExportSink {
  readonly durable = true;
  private handle: FileHandle | undefined;
  private broken = false;

  constructor(private readonly path: string) {}

  get alive(): boolean {
    return this.handle !== undefined && !this.broken;
  }

  async open(): Promise<void> {
    this.broken = false;
    const handle = await open(this.path, 'a+', 0o600).catch((error: Error) => {
      throw new ExportError('EXPORT_SINK', `Could not open ${this.path}: ${error.message}.`, {
        cause: error,
      });
    });
    try {
      // A write that failed half way (a full disk) left a line without its newline: the next
      // record would be glued onto it and no reader could parse either. End that line first.
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      if (size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a)
        await writeAll(handle, Buffer.from('\n'));
    } catch (error) {
      await handle.close().catch(() => {});
      throw new ExportError('EXPORT_SINK', `Could not write ${this.path}: ${(error as Error).message}.`, {
        cause: error,
      });
    }
    this.handle = handle;
  }

  async write(frames: readonly Buffer[]): Promise<void> {
    const handle = this.handle;
    if (!handle) throw new ExportError('EXPORT_SINK', `${this.path} is not open`);
    try {
      await writeAll(handle, Buffer.concat(frames));
      await handle.datasync();
    } catch (error) {
      this.broken = true;
      throw new ExportError('EXPORT_SINK', `Could not write ${this.path}: ${(error as Error).message}.`, {
        cause: error,
      });
    }
  }

  async finish(): Promise<boolean> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => {});
    return !this.broken;
  }

  destroy(): void {
    void this.finish();
  }
}

/** All of `bytes`: write(2) on a regular file may take fewer than asked (a disk filling up). */
async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let at = 0;
  while (at < bytes.length) {
    const { bytesWritten } = await handle.write(bytes.subarray(at));
    if (bytesWritten <= 0)
      throw new ExportError('EXPORT_SINK', `no byte written at offset ${at} of ${bytes.length}`);
    at += bytesWritten;
  }
}

/** TCP, or TLS with the configured CA and client certificate, to a syslog or JSON lines collector. */
class StreamSink implements ExportSink {
  readonly durable = false;
  private socket: Socket | undefined;
  private broken = false;
  private peerEnded = false;
  private failure: Error | undefined;

  constructor(private readonly target: Extract<ExportTarget, { kind: 'stream' }>) {}

  get alive(): boolean {
    return this.socket !== undefined && !this.broken;
  }

  open(): Promise<void> {
    this.broken = false;
    this.peerEnded = false;
    this.failure = undefined;
    const { host, port, tls } = this.target;
    return new Promise((resolve, reject) => {
      let socket: Socket;
      try {
        socket = tls
          ? connectTls({
              host,
              port,
              // SNI carries names only (RFC 6066); an IP is checked against the certificate's IP SANs.
              ...(tls.serverName || isIP(host) === 0 ? { servername: tls.serverName ?? host } : {}),
              ...(tls.ca ? { ca: readFileSync(tls.ca) } : {}),
              ...(tls.cert ? { cert: readFileSync(tls.cert) } : {}),
              ...(tls.key ? { key: readFileSync(tls.key) } : {}),
            })
          : connectTcp({ host, port });
      } catch (error) {
        reject(
          new ExportError(
            'EXPORT_SINK',
            `Could not connect to ${this.target.url}: ${(error as Error).message}.`,
            { cause: error },
          ),
        );
        return;
      }
      const ready = tls ? 'secureConnect' : 'connect';
      const onError = (error: Error) => {
        socket.destroy();
        reject(
          new ExportError('EXPORT_SINK', `Could not connect to ${this.target.url}: ${error.message}.`, {
            cause: error,
          }),
        );
      };
      socket.once('error', onError);
      socket.setTimeout(10_000, () =>
        socket.destroy(new ExportError('EXPORT_SINK', 'no answer within 10 s')),
      );
      socket.once(ready, () => {
        socket.off('error', onError);
        socket.setTimeout(0);
        socket.setKeepAlive(true, 10_000);
        socket.setNoDelay(true);
        // A collector does not talk back; reading keeps us told of its close or reset at once.
        socket.on('data', () => {});
        socket.on('end', () => {
          this.peerEnded = true;
          this.broken = true;
        });
        socket.on('error', (error) => {
          this.failure = error;
          this.broken = true;
        });
        socket.on('close', () => {
          this.broken = true;
        });
        this.socket = socket;
        resolve();
      });
    });
  }

  write(frames: readonly Buffer[]): Promise<void> {
    const socket = this.socket;
    if (!socket || this.broken)
      return Promise.reject(
        new ExportError('EXPORT_SINK', `The connection to ${this.target.url} is closed.`),
      );
    return new Promise((resolve, reject) => {
      socket.write(Buffer.concat(frames), (error) => {
        if (error || this.broken) {
          this.broken = true;
          reject(
            new ExportError(
              'EXPORT_SINK',
              `Could not send to ${this.target.url}: ${(error ?? this.failure)?.message ?? 'the collector closed the connection'}.`,
            ),
          );
        } else resolve();
      });
    });
  }

  /** Our FIN after the data, then the collector's: it closes its side once it read to our end. */
  finish(timeoutMs: number): Promise<boolean> {
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return Promise.resolve(false);
    if (this.broken) {
      socket.destroy();
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, timeoutMs);
      socket.once('close', (hadError) => {
        clearTimeout(timer);
        resolve(!hadError && this.peerEnded && this.failure === undefined);
      });
      socket.end();
    });
  }

  destroy(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }
}
