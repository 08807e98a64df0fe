/** Keeps the last `limit` bytes of a server's stderr, with the values of its env redacted. */
export class StderrTail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly secrets: readonly string[],
    private readonly limit = 8 * 1024,
  ) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    // Keep a little more than the limit so a secret split across chunks is still redacted whole.
    const keep = this.limit * 2;
    while (this.size > keep && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  /** The retained text, secrets replaced by `[redacted]`, cut to the last `limit` bytes. */
  text(): string {
    let text = Buffer.concat(this.chunks).toString('utf8');
    // Longest first, so a secret containing another is replaced whole.
    for (const secret of [...this.secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) {
      text = text.split(secret).join('[redacted]');
    }
    const bytes = Buffer.from(text);
    return bytes.length <= this.limit
      ? text
      : bytes
          .subarray(bytes.length - this.limit)
          .toString('utf8')
          .replace(/^\uFFFD+/, '');
  }
}
