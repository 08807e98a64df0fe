import { createInterface } from 'node:readline/promises';
import { PinError } from '@ringfence/gateway/pins';

/**
 * Approvals need a person at a terminal: both stdin and stdout must be TTYs. This stops a pipe
 * or a script (or a model driving a shell through one) from approving; it does not stop a
 * determined local user, which is what organisation pins are for.
 */
export function requireTerminal(action: string): void {
  if (process.stdin.isTTY && process.stdout.isTTY) return;
  throw new PinError(
    'PIN_NO_TERMINAL',
    `${action} needs a person at a terminal: stdin and stdout must both be terminals, and here at least one is a pipe or file. Run the command yourself in an interactive terminal.`,
  );
}

export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
