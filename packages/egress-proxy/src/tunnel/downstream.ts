import type { OnReadOpts, Socket } from 'node:net';

/**
 * The upstream → client half of a tunnel, read with `onread` (a buffer we own) instead of 'data'
 * events: a bulk download otherwise costs, per 64 KiB chunk, a fresh allocation (and the garbage
 * collection it feeds) and a trip through the Readable stream machinery, which together are most
 * of the relay's CPU per byte. The bytes, their order, backpressure, half-close (the socket's
 * 'end') and the byte counts (`bytesRead`) are exactly those of the 'data' path.
 *
 * Two kinds of read buffer:
 * - one buffer shared by every tunnel of the process, for reads that do not fill it (idle and
 *   interactive tunnels: TLS records, small responses). What is read into it is copied out before
 *   the callback returns (the next read of any tunnel may land in it), so an idle tunnel holds no
 *   read buffer at all, as with 'data' events, and no bytes of one tunnel can reach another: only
 *   the `n` bytes just read are ever passed on.
 * - two buffers of the tunnel's own once a read fills the shared one (a bulk transfer): each is
 *   written to the client without a copy and read into again once the kernel has taken it. While
 *   the client has one of them pending the next read goes into the other; with both pending the
 *   upstream is paused until the client has taken the later one (its write's callback: writes
 *   complete in order), the same bound as the 'data' path's. A short read
 *   with nothing pending means the upstream is drained, and the tunnel goes back to the shared
 *   buffer (its own go to a small spare list, so a tunnel idle after a download holds nothing).
 */
const CHUNK = 64 * 1024;

/** One process-wide read buffer; never referenced after a read callback returns (see above). */
const shared = Buffer.allocUnsafeSlow(CHUNK);

/** A copy of what the shared buffer's client holds pending beyond this pauses the upstream. */
const COPY_BOUND = CHUNK;

/**
 * Pairs of own buffers given back by tunnels whose upstream drained, with nothing of them pending
 * (so nothing references them): a download's reads alternate full and short, and each switch
 * back to bulk would otherwise allocate a new pair. Bounded, so at most SPARE_MAX pairs are held.
 */
const spare: [Buffer, Buffer][] = [];
const SPARE_MAX = 8;

export class DownstreamReader {
  private client: Socket | null = null;
  private upstream: Socket | null = null;
  /** Bytes read before the relay was attached (copies), written on attach. */
  private early: Buffer[] = [];
  private own: [Buffer, Buffer] | null = null;
  /** Index of the own buffer the next read lands in. */
  private current = 0;
  /** A failed write is the client's teardown (its error/close handlers end the tunnel). */
  private readonly resumeAfterWrite = (error?: Error | null) => {
    if (!error) this.upstream?.resume();
  };

  /** The `onread` option for the upstream's `net.connect`. */
  readonly onread: OnReadOpts = {
    buffer: () => (this.own === null ? shared : (this.own[this.current] as Buffer)),
    callback: (n, buffer) => this.onRead(n, buffer as Buffer),
  };

  /** Starts passing bytes read from `upstream` to `client`. */
  attach(upstream: Socket, client: Socket): void {
    this.upstream = upstream;
    this.client = client;
    const early = this.early;
    this.early = [];
    const last = early.pop();
    if (last === undefined) return;
    for (const chunk of early) client.write(chunk);
    // Paused when bytes came before the relay existed; a listener-less resume is what restarts it.
    if (client.writableLength + last.length > COPY_BOUND) this.writeThenWait(client, last);
    else {
      client.write(last);
      upstream.resume();
    }
  }

  private onRead(n: number, buffer: Buffer): boolean {
    const client = this.client;
    if (client === null) {
      this.early.push(Buffer.from(buffer.subarray(0, n)));
      // Bounded: nothing more is read until the relay is attached.
      return false;
    }
    // A destroyed or ended client takes no more bytes; as on the 'data' path, the upstream then
    // waits (paused) for the tunnel's teardown or idle timeout.
    if (client.destroyed || !client.writable) return false;
    if (buffer !== shared) return this.fromOwn(client, n, buffer);
    const copy = Buffer.from(buffer.subarray(0, n));
    // A read that fills the shared buffer: more is waiting, this is a bulk transfer.
    if (n === CHUNK && this.own === null) {
      this.own = spare.pop() ?? [Buffer.allocUnsafeSlow(CHUNK), Buffer.allocUnsafeSlow(CHUNK)];
      this.current = 0;
    }
    // More than a chunk pending once this one is queued behind what is pending: wait until the
    // client has taken this one (and so everything before it).
    if (client.writableLength + n > COPY_BOUND) return this.writeThenWait(client, copy);
    client.write(copy);
    return true;
  }

  private fromOwn(client: Socket, n: number, buffer: Buffer): boolean {
    const chunk = buffer.subarray(0, n);
    // Earlier bytes still pending (the other own buffer may be among them): this chunk is queued
    // behind them, so wait until the client has taken it, which frees both buffers.
    if (client.writableLength > 0) {
      this.current ^= 1;
      return this.writeThenWait(client, chunk);
    }
    client.write(chunk);
    if (client.writableLength === 0) {
      // The kernel took it all: the same buffer is free for the next read, unless the upstream
      // is drained, in which case the tunnel goes back to holding no buffer of its own.
      if (n < CHUNK && this.own !== null) {
        if (spare.length < SPARE_MAX) spare.push(this.own);
        this.own = null;
      }
      return true;
    }
    // Only this chunk is pending: the next read goes into the other buffer.
    this.current ^= 1;
    return true;
  }

  /**
   * Writes the last chunk before a pause and resumes the upstream when that write completes.
   * Writes complete in order, so by then the client holds nothing of ours. Not 'drain': a socket
   * emits it only after a write that reached its high-water mark, and a few short chunks pending
   * never do, which left the upstream paused for good (a stalled tunnel).
   */
  private writeThenWait(client: Socket, chunk: Buffer): false {
    client.write(chunk, this.resumeAfterWrite);
    return false;
  }
}
