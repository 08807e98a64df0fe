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
 *   upstream is paused until the client drains, the same bound as the 'data' path's. A short read
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
  /** Bytes read into each own buffer the last time, to know which one the client still holds. */
  private readonly sizes: [number, number] = [0, 0];
  private readonly resume = () => this.upstream?.resume();

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
    for (const chunk of early) client.write(chunk);
    // Paused when bytes came before the relay existed; a listener-less resume is what restarts it.
    if (early.length > 0) this.afterWrite(client);
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
    client.write(Buffer.from(buffer.subarray(0, n)));
    // A read that fills the shared buffer: more is waiting, this is a bulk transfer.
    if (n === CHUNK && this.own === null) {
      this.own = spare.pop() ?? [Buffer.allocUnsafeSlow(CHUNK), Buffer.allocUnsafeSlow(CHUNK)];
      this.current = 0;
    }
    return client.writableLength > COPY_BOUND ? this.pauseUntilDrain(client) : true;
  }

  private fromOwn(client: Socket, n: number, buffer: Buffer): boolean {
    client.write(buffer.subarray(0, n));
    const i = this.current;
    this.sizes[i] = n;
    const pending = client.writableLength;
    if (pending === 0) {
      // The kernel took it all: the same buffer is free for the next read, unless the upstream
      // is drained, in which case the tunnel goes back to holding no buffer of its own.
      if (n < CHUNK && this.own !== null) {
        if (spare.length < SPARE_MAX) spare.push(this.own);
        this.own = null;
      }
      return true;
    }
    // Writes complete in order: when more is pending than this chunk, the other buffer is held too.
    this.current = i ^ 1;
    return pending > n ? this.pauseUntilDrain(client) : true;
  }

  private pauseUntilDrain(client: Socket): false {
    client.once('drain', this.resume);
    return false;
  }

  private afterWrite(client: Socket): void {
    if (client.writableLength > COPY_BOUND) client.once('drain', this.resume);
    else this.upstream?.resume();
  }
}
