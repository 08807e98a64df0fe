/**
 * A command's stdout and stderr, kept up to one cap on both together: the byte that would pass
 * the cap is not kept, and `over` tells the runner to stop the command (a command that keeps
 * writing would otherwise fill the gateway's memory or the model's context).
 */
export class CappedOutput {
  private readonly parts = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  private kept = 0;
  private seen = 0;

  constructor(readonly capBytes: number) {}

  /** Keeps what fits; returns false once the output went beyond the cap. */
  push(stream: 'stdout' | 'stderr', chunk: Buffer): boolean {
    this.seen += chunk.length;
    const room = this.capBytes - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.parts[stream].push(part);
      this.kept += part.length;
    }
    return !this.over;
  }

  get over(): boolean {
    return this.seen > this.capBytes;
  }

  /** Bytes the command wrote, kept or not. */
  get bytesSeen(): number {
    return this.seen;
  }

  text(stream: 'stdout' | 'stderr'): string {
    return Buffer.concat(this.parts[stream]).toString('utf8');
  }
}
