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
    const secrets = [...this.secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
    for (const secret of secrets) text = text.split(secret).join('[redacted]');
    // A secret cut by the start of what is kept (older chunks were dropped), or not yet complete
    // at the end, leaves a piece of itself: redact those pieces too (4 characters or more).
    for (const secret of secrets) {
      for (let k = secret.length - 1; k >= 4; k--) {
        if (text.startsWith(secret.slice(-k))) {
          text = `[redacted]${text.slice(k)}`;
          break;
        }
      }
      for (let k = secret.length - 1; k >= 4; k--) {
        if (text.endsWith(secret.slice(0, k))) {
          text = `${text.slice(0, text.length - k)}[redacted]`;
          break;
        }
      }
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
