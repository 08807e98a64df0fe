import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Children started by a test file; `stopAll` in afterAll/afterEach kills them by pid. */
const children = new Set<ChildProcess>();

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export async function stopAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 3000).unref();
        }),
    ),
  );
}

/** Start a process that prints one JSON line when ready; resolve with that line and the child. */
export function startWithReadyLine<T>(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 30_000,
): Promise<{ child: ChildProcess; ready: T; stderr: () => string }> {
  const child = track(
    spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${command} ${args.join(' ')} was not ready in ${timeoutMs} ms: ${stderr}`)),
      timeoutMs,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const ready = JSON.parse(line) as T;
        clearTimeout(timer);
        resolve({ child, ready, stderr: () => stderr });
      } catch {
        /* not the ready line yet */
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before it was ready: ${stderr}`));
    });
  });
}
