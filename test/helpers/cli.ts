import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const cliBin = `${repoRoot}packages/cli/bin/run.js`;

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  /** stderr with oclif's error wrapping (` ›   ` continuation lines) and colours undone. */
  readonly stderr: string;
}

/** oclif wraps error messages at the terminal width and prefixes each line; undo that for matching. */
export function unwrap(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\s*\n\s*›\s+/g, ' ');
}

/** Run the real `ringfence` binary as a user would, with extra environment (and a folder to run in). */
export function ringfence(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
  options: { cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      env: { ...process.env, ...env },
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr: unwrap(stderr) }));
    child.stdin.end(input ?? '');
  });
}
