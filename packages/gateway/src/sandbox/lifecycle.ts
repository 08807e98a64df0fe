import { FrameDemux } from '../runtime/attach.js';
import { renderUntrusted } from '../text/render.js';
import type { ExecRequest, LogsRequest } from './args-lifecycle.js';
import { SandboxError } from './errors.js';
import { BackgroundExecs, type ExecRecord, TailBuffer } from './execs.js';
import type { Sandboxes, SandboxSummary } from './sandboxes.js';

/** Seconds a stop waits for the main process to end on SIGTERM before the engine kills it. */
export const STOP_GRACE_SECONDS = 2;

/** One stream as the assistant reads it: rendered (docs/untrusted-text.md), its end kept. */
export interface ShownStream {
  readonly text: string;
  /** Bytes written but not shown (the start, beyond max_bytes or what the gateway kept). */
  readonly dropped_bytes: number;
  /** Characters shown as `\u{…}` (controls, escapes, invisible characters). */
  readonly escaped: number;
}

function shown(bytes: Buffer, maxBytes: number, droppedBefore = 0): ShownStream {
  const kept = bytes.length > maxBytes ? bytes.subarray(bytes.length - maxBytes) : bytes;
  // Terminal escapes, bidirectional controls and other invisible characters a sandbox printed are
  // shown as escapes, never passed on to be obeyed or to hide text.
  const rendered = renderUntrusted(kept.toString('utf8'));
  return {
    text: rendered.text,
    dropped_bytes: droppedBefore + (bytes.length - kept.length),
    escaped: rendered.escaped,
  };
}

/** Splits the engine's multiplexed log (a container without a TTY) into its two streams. */
export function splitLog(raw: Buffer, capBytes: number): { stdout: TailBuffer; stderr: TailBuffer } {
  const stdout = new TailBuffer(capBytes);
  const stderr = new TailBuffer(capBytes);
  const demux = new FrameDemux(
    (bytes) => stdout.push(bytes),
    (bytes) => stderr.push(bytes),
    () => {},
  );
  demux.push(raw);
  return { stdout, stderr };
}

/**
 * Start, stop, logs and background commands of the sandboxes `Sandboxes` finds (this gateway's,
 * or persistent ones of this home): each acts on that one container only.
 */
export class Lifecycle {
  readonly execs = new BackgroundExecs();

  constructor(private readonly sandboxes: Sandboxes) {}

  async stop(name: string): Promise<SandboxSummary> {
    const engine = await this.sandboxes.engine();
    const found = await this.sandboxes.find(engine, name);
    if (found.State === 'running' || found.State === 'restarting' || found.State === 'paused')
      await engine.docker
        .getContainer(found.Id)
        .stop({ t: STOP_GRACE_SECONDS })
        .catch((error: { statusCode?: number; message: string }) => {
          // 304: it stopped meanwhile.
          if (error.statusCode !== 304)
            throw new SandboxError(
              'SANDBOX_RUN',
              `the sandbox "${name}" could not be stopped: ${error.message}`,
            );
        });
    return this.summary(name);
  }

  async start(name: string): Promise<SandboxSummary> {
    const engine = await this.sandboxes.engine();
    const found = await this.sandboxes.find(engine, name);
    // The engine resolves each bind mount's source again at a start: checked as a create would be.
    if (found.State !== 'running') await this.sandboxes.recheck(engine, found.Id);
    if (found.State !== 'running')
      // The engine starts the very container made by sandbox_create: its configuration (image,
      // limits, user, network, mounts, labels) is not given again and cannot change here.
      await engine.docker
        .getContainer(found.Id)
        .start()
        .catch((error: { statusCode?: number; message: string }) => {
          if (error.statusCode !== 304)
            throw new SandboxError(
              'SANDBOX_RUN',
              `the sandbox "${name}" could not be started: ${error.message}. Delete it with sandbox_delete and make it again.`,
            );
        });
    return this.summary(name);
  }

  private async summary(name: string): Promise<SandboxSummary> {
    const list = await this.sandboxes.list();
    const found = list.find((s) => s.name === name);
    if (!found) throw new SandboxError('SANDBOX_UNKNOWN', `the sandbox "${name}" is gone.`);
    return found;
  }

  async exec(request: ExecRequest): Promise<{ exec: string; started_at: string }> {
    const engine = await this.sandboxes.engine();
    const found = await this.sandboxes.find(engine, request.name);
    if (found.State !== 'running')
      throw new SandboxError(
        'SANDBOX_RUN',
        `the sandbox "${request.name}" is ${found.State}, not running; start it with sandbox_start.`,
      );
    this.execs.retainOnly(await this.sandboxes.containerIds(engine));
    const record = await this.execs.start(found.Id, engine.docker.getContainer(found.Id), request);
    return { exec: record.id, started_at: record.startedAt };
  }

  async logs(request: LogsRequest): Promise<Record<string, unknown>> {
    const engine = await this.sandboxes.engine();
    const found = await this.sandboxes.find(engine, request.name);
    if (request.exec !== undefined)
      return execLogs(this.execs.get(found.Id, request.exec, request.name), request.maxBytes);
    const raw = (await engine.docker.getContainer(found.Id).logs({
      follow: false,
      stdout: true,
      stderr: true,
      tail: request.tail,
      ...(request.since !== undefined ? { since: request.since } : {}),
    })) as unknown as Buffer;
    const { stdout, stderr } = splitLog(
      Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)),
      request.maxBytes,
    );
    return {
      name: request.name,
      state: found.State,
      stdout: shown(stdout.bytes(), request.maxBytes, stdout.bytesDropped),
      stderr: shown(stderr.bytes(), request.maxBytes, stderr.bytesDropped),
      background: this.execs.list(found.Id).map((r) => ({
        exec: r.id,
        running: r.running,
        exit_code: r.exitCode,
      })),
    };
  }
}

function execLogs(record: ExecRecord, maxBytes: number): Record<string, unknown> {
  return {
    exec: record.id,
    command: record.command,
    running: record.running,
    exit_code: record.exitCode,
    started_at: record.startedAt,
    ...(record.endedAt ? { ended_at: record.endedAt } : {}),
    ...(record.problem ? { problem: record.problem } : {}),
    stdout: shown(record.stdout.bytes(), maxBytes, record.stdout.bytesDropped),
    stderr: shown(record.stderr.bytes(), maxBytes, record.stderr.bytesDropped),
  };
}
