import type Docker from 'dockerode';
import type { CallProgress } from '../ports/upstream.js';
import { FrameDemux } from '../runtime/attach.js';
import type { RunRequest } from './args.js';
import { SandboxError } from './errors.js';
import { openExec } from './exec-stream.js';
import { CappedOutput } from './output.js';

export interface RunOutcome {
  /** null when the command was stopped (timeout, output cap, cancel) before it exited. */
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Why ringfence stopped it, when it did. */
  readonly stopped?: 'timeout' | 'output-cap' | 'cancelled';
  readonly outputBytes: number;
  readonly durationMs: number;
}

export interface RunOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: CallProgress) => void;
  /** How often progress is told (default: each second). */
  readonly progressEveryMs?: number;
}

/**
 * One command in a running sandbox (`exec`, no TTY, no stdin), its output capped. The engine has
 * no way to kill one exec'd process, so a command that must stop (its timeout, its output cap,
 * the client's cancel) stops with the container's processes: the container is restarted, its
 * files kept. The restart ends the exec's stream, so the call never outlives its budget by more
 * than the engine's restart.
 */
export async function runInSandbox(
  container: Docker.Container,
  request: RunRequest,
  options: RunOptions = {},
): Promise<RunOutcome> {
  const started = Date.now();
  const { exec, stream } = await openExec(container, request.command, request.workdir);
  const output = new CappedOutput(request.maxOutputBytes);
  let stopped: RunOutcome['stopped'];
  let stopping: Promise<unknown> | undefined;
  const stop = (why: NonNullable<RunOutcome['stopped']>) => {
    if (stopping) return;
    stopped = why;
    // Restart, not kill: the sandbox stays usable for the next command.
    stopping = container.restart({ t: 0 }).catch(() => container.kill().catch(() => {}));
  };
  const demux = new FrameDemux(
    (bytes) => output.push('stdout', bytes) || stop('output-cap'),
    (bytes) => output.push('stderr', bytes) || stop('output-cap'),
    () => stop('output-cap'),
  );
  const timer = setTimeout(() => stop('timeout'), request.timeoutMs);
  const onAbort = () => stop('cancelled');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  let ticks = 0;
  const progress = options.onProgress
    ? setInterval(() => {
        ticks += 1;
        options.onProgress?.({
          progress: ticks,
          message: `running for ${Math.round((Date.now() - started) / 1000)} s, ${output.bytesSeen} bytes of output`,
        });
      }, options.progressEveryMs ?? 1000)
    : undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk: Buffer) => {
        if (!stopped) demux.push(chunk);
      });
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', (error) => (stopped ? resolve() : reject(error)));
    });
  } catch (error) {
    throw new SandboxError('SANDBOX_RUN', `the command's output stream failed: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    if (progress) clearInterval(progress);
    options.signal?.removeEventListener('abort', onAbort);
  }
  await stopping;
  const exitCode = stopped ? null : ((await exec.inspect()).ExitCode ?? null);
  return {
    exitCode,
    stdout: output.text('stdout'),
    stderr: output.text('stderr'),
    ...(stopped ? { stopped } : {}),
    outputBytes: output.bytesSeen,
    durationMs: Date.now() - started,
  };
}
