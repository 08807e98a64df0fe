import { spawn } from 'node:child_process';
import { cliBin, unwrap } from './cli.js';

export interface TerminalRun {
  readonly code: number | null;
  /** Every byte the terminal received from the command, stdout and stderr together, in order. */
  readonly bytes: Buffer;
}

/**
 * Run the ringfence CLI under a pseudo-terminal (util-linux `script`), as a person at a terminal
 * would: it answers the first `[y/N]` prompt with `answer`, and stops the command (SIGTERM to
 * `script`, which hangs up the terminal) once `until` holds for what was written so far. With
 * `rawNewlines`, the terminal does not turn "\n" into "\r\n", so every CR in `bytes` is one the
 * command wrote.
 */
export function runInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { answer?: string; until?: (text: string) => boolean; rawNewlines?: boolean } = {},
): Promise<TerminalRun> {
  const quote = (part: string) => `'${part.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, cliBin, ...args].map(quote).join(' ');
  const shell = options.rawNewlines ? `stty -onlcr; exec ${command}` : command;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', shell, '/dev/null'], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stopped = false;
    const received = (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('utf8');
      if (options.answer !== undefined && text.includes('[y/N]') && !child.stdin.writableEnded)
        child.stdin.end(`${options.answer}\n`);
      if (!stopped && options.until?.(text)) {
        stopped = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', received);
    child.stderr.on('data', received);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, bytes: Buffer.concat(chunks) }));
  });
}

/**
 * Run the ringfence CLI under a pseudo-terminal, answering its prompt with `answer`: how a person
 * at a terminal would approve. The output is unwrapped (oclif's line breaks and colours undone).
 */
export async function ringfenceInTerminal(args: string[], env: NodeJS.ProcessEnv, answer: string) {
  const run = await runInTerminal(args, env, { answer });
  return { code: run.code, output: unwrap(run.bytes.toString()) };
}
