import { spawn } from 'node:child_process';
import { cliBin, unwrap } from './cli.js';

/**
 * Run the ringfence CLI under a pseudo-terminal (util-linux `script`), answering its prompt
 * with `answer`: how a person at a terminal would approve.
 */
export function ringfenceInTerminal(args: string[], env: NodeJS.ProcessEnv, answer: string) {
  const command = [process.execPath, cliBin, ...args]
    .map((part) => `'${part.replaceAll("'", `'\\''`)}'`)
    .join(' ');
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('[y/N]') && !child.stdin.writableEnded) child.stdin.end(`${answer}\n`);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: unwrap(output) }));
  });
}
