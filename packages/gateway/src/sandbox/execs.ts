import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { FrameDemux } from '../runtime/attach.js';
import type { ExecRequest } from './args-lifecycle.js';
import { SandboxError } from './errors.js';
import { openExec } from './exec-stream.js';
import { EXEC_OUTPUT_BYTES, MAX_EXECS_KEPT, MAX_EXECS_RUNNING } from './limits-lifecycle.js';

/** The last `cap` bytes written to one stream, and how many came in all. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  private seen = 0;

  constructor(readonly capBytes: number) {}

  push(chunk: Buffer): void {
    this.seen += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept > this.capBytes) {
      const first = this.chunks[0]!;
      const over = this.kept - this.capBytes;
      if (first.length <= over) {
        this.chunks.shift();
        this.kept -= first.length;
      } else {
        this.chunks[0] = first.subarray(over);
        this.kept -= over;
      }
    }
  }

  get bytesSeen(): number {
    return this.seen;
  }

  /** Bytes written but no longer kept (the start of the output). */
  get bytesDropped(): number {
    return this.seen - this.kept;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export interface ExecRecord {
  readonly id: string;
  readonly command: readonly string[];
  readonly startedAt: string;
  readonly stdout: TailBuffer;
  readonly stderr: TailBuffer;
  running: boolean;
  exitCode: number | null;
  endedAt?: string;
  /** Why its output stream failed, when it did. */
  problem?: string;
}

/**
 * Background commands (`sandbox_exec`), one registry per gateway: each runs as one engine `exec`
 * whose attached output stream the gateway reads into a bounded buffer, so the command needs no
 * shell, no file in the sandbox and no second call to keep running. What is kept lives in this
 * process's memory only: it goes with the gateway, or when the sandbox is deleted.
 */
export class BackgroundExecs {
  /** Sandbox key (its container id) → its commands, oldest first. */
  private readonly bySandbox = new Map<string, ExecRecord[]>();

  private records(sandbox: string): ExecRecord[] {
    let list = this.bySandbox.get(sandbox);
    if (!list) {
      list = [];
      this.bySandbox.set(sandbox, list);
    }
    return list;
  }

  /** Starts it and returns once the engine started it; its output is read on in the background. */
  async start(sandbox: string, container: Docker.Container, request: ExecRequest): Promise<ExecRecord> {
    const list = this.records(sandbox);
    if (list.filter((r) => r.running).length >= MAX_EXECS_RUNNING)
      throw new SandboxError(
        'SANDBOX_RUN',
        `${MAX_EXECS_RUNNING} background commands already run in the sandbox "${request.name}"; wait for one to end (see sandbox_logs with its exec id), or stop the sandbox with sandbox_stop.`,
      );
    const { exec, stream } = await openExec(container, request.command, request.workdir);
    const record: ExecRecord = {
      id: `x${randomBytes(6).toString('hex')}`,
      command: [...request.command],
      startedAt: new Date().toISOString(),
      stdout: new TailBuffer(EXEC_OUTPUT_BYTES),
      stderr: new TailBuffer(EXEC_OUTPUT_BYTES),
      running: true,
      exitCode: null,
    };
    list.push(record);
    this.forgetOld(list);
    const demux = new FrameDemux(
      (bytes) => record.stdout.push(bytes),
      (bytes) => record.stderr.push(bytes),
      (reason) => {
        record.problem = `its output could not be read on: ${reason}`;
      },
    );
    let ended = false;
    const end = async (problem?: string) => {
      if (ended) return;
      ended = true;
      if (problem) record.problem = problem;
      const info = await exec.inspect().catch(() => undefined);
      record.exitCode = typeof info?.ExitCode === 'number' && info.Running === false ? info.ExitCode : null;
      record.running = false;
      record.endedAt = new Date().toISOString();
    };
    stream.on('data', (chunk: Buffer) => demux.push(chunk));
    stream.once('end', () => void end());
    stream.once('close', () => void end());
    stream.once('error', (error: Error) => void end(`its output stream failed: ${error.message}`));
    return record;
  }

  /** Keeps at most MAX_EXECS_KEPT, dropping the oldest ended ones (running ones are never dropped). */
  private forgetOld(list: ExecRecord[]): void {
    while (list.length > MAX_EXECS_KEPT) {
      const index = list.findIndex((r) => !r.running);
      if (index < 0) return;
      list.splice(index, 1);
    }
  }

  get(sandbox: string, id: string, name: string): ExecRecord {
    const found = this.bySandbox.get(sandbox)?.find((r) => r.id === id);
    if (!found)
      throw new SandboxError(
        'SANDBOX_UNKNOWN',
        `the sandbox "${name}" has no background command ${id} in this gateway (ids are kept in the gateway's memory: at most ${MAX_EXECS_KEPT} per sandbox, and not across gateways). Start one with sandbox_exec.`,
      );
    return found;
  }

  list(sandbox: string): readonly ExecRecord[] {
    return this.bySandbox.get(sandbox) ?? [];
  }

  /** Sandboxes deleted meanwhile: what was kept of their commands goes too. */
  retainOnly(sandboxes: readonly string[]): void {
    const live = new Set(sandboxes);
    for (const key of [...this.bySandbox.keys()]) if (!live.has(key)) this.bySandbox.delete(key);
  }
}
