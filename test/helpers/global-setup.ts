import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * End-to-end tests are about real containers: make sure an engine answers (installing and
 * starting Debian's docker.io when we are root on Debian), and fail loudly otherwise — never skip.
 */
export default function setup(): void {
  try {
    execFileSync(`${repo}/scripts/ensure-engine`, {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 600_000,
    });
  } catch {
    throw new Error(
      'The end-to-end tests need a container engine and none could be started. Run scripts/ensure-engine and read what it says.',
    );
  }
}
