/**
 * What `mcp serve` needs before its heavy modules load (docs/architecture.md, "Start-up"): kept
 * apart and light so that the bundled start can name its session and start the container
 * runtime while the rest is still being loaded.
 */
import { randomBytes } from 'node:crypto';

export function newSessionId(): string {
  return randomBytes(6).toString('hex');
}

const traced = process.env.RINGFENCE_STARTUP_TRACE === '1';

/**
 * `RINGFENCE_STARTUP_TRACE=1`: one stderr line per start-up phase, in milliseconds since the
 * process started (`performance.now()`), so where the time to ready goes can be read off one run
 * without a profiler. stderr only: stdout of `mcp serve` is the protocol.
 */
export function startupMark(phase: string): void {
  if (traced) process.stderr.write(`ringfence: start-up ${performance.now().toFixed(1)} ms: ${phase}\n`);
}
