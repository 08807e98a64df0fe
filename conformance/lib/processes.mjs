// Children of the runner: started with their output kept, waited for by a line they print, and
// stopped by their own pid (SIGTERM, then SIGKILL if they do not go), never by name.
import { spawn } from 'node:child_process';

/**
 * Start `command args` and resolve once a line of stdout or stderr matches `ready` (a RegExp):
 * with the child, the match, and its output so far (also kept up to date afterwards). Rejects,
 * with that output, if the child exits first or `timeoutMs` passes (and then stops it).
 */
/**
 * @param {string} command
 * @param {string[]} args
 * @param {{ ready: RegExp, env?: NodeJS.ProcessEnv, timeoutMs?: number, cwd?: string }} options
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, match: RegExpExecArray, output: { stdout: string, stderr: string } }>}
 */
export function startUntil(command, args, { ready, env = process.env, timeoutMs = 60_000, cwd }) {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error, match) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        stop(child).finally(() => reject(error));
      } else resolve({ child, match, output });
    };
    const timer = setTimeout(
      () =>
        finish(
          new Error(`${describe(command, args)} was not ready within ${timeoutMs / 1000} s.${tail(output)}`),
        ),
      timeoutMs,
    );
    for (const stream of ['stdout', 'stderr']) {
      let partial = '';
      child[stream].on('data', (chunk) => {
        output[stream] += chunk.toString();
        partial += chunk.toString();
        const lines = partial.split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          const match = ready.exec(line);
          if (match) finish(undefined, match);
        }
      });
    }
    child.once('error', (error) =>
      finish(new Error(`${describe(command, args)} did not start: ${error.message}`)),
    );
    child.once('exit', (code, signal) =>
      finish(
        new Error(
          `${describe(command, args)} exited (${signal ?? code}) before it was ready.${tail(output)}`,
        ),
      ),
    );
  });
}

/** Run `command args` to the end; resolves with its exit code and output (never rejects on code). */
/**
 * @param {string} command
 * @param {string[]} args
 * @param {{ env?: NodeJS.ProcessEnv, timeoutMs?: number, cwd?: string }} [options]
 * @returns {Promise<{ code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, timedOut: boolean }>}
 */
export function runToEnd(command, args, { env = process.env, timeoutMs = 120_000, cwd } = {}) {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void stop(child);
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${describe(command, args)} did not start: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

/** Stop one child we started: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited. */
export function stop(child, graceMs = 20_000) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
      return resolve(undefined);
    child.once('exit', () => resolve(undefined));
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), graceMs).unref();
  });
}

function describe(command, args) {
  return [command, ...args].join(' ');
}

function tail(output) {
  const text = `${output.stdout}${output.stderr}`.trim();
  return text ? ` Its output ended with:\n${text.split('\n').slice(-15).join('\n')}` : ' It printed nothing.';
}
