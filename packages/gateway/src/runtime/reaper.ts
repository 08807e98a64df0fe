import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { isPersistent, LABEL, type Owner, ownedBy } from './labels.js';
import { removeManaged, type SweepReport } from './sweep.js';

/** The script the reaper process runs (compiled next to this file). */
export const REAPER_MAIN = fileURLToPath(new URL('./reaper-main.js', import.meta.url));
export const READY_LINE = 'ready';

/** Where a reaper writes its own failures, and what it removed: one file for every gateway. */
export const reaperLogPath = (home: string) => join(home, 'logs', 'reaper.log');

/**
 * After the first pass, again at these delays: a create or start the gateway had in flight when
 * it died may still complete in the engine after the first listing.
 */
export const REAP_PASS_DELAYS_MS = [1000, 3000] as const;

/** The reaper's command line, readable in `ps` (session and owner pid), parsed by `parseOwnerArgs`. */
export function ownerArgs(owner: Owner): string[] {
  return [
    '--session',
    owner.session,
    '--pid',
    String(owner.pid),
    '--pid-start',
    owner.pidStart,
    '--host',
    owner.host,
  ];
}

export function parseOwnerArgs(argv: readonly string[]): Owner {
  const value = (flag: string) => {
    const index = argv.indexOf(flag);
    const found = index >= 0 ? argv[index + 1] : undefined;
    if (found === undefined) throw new GatewayError('REAPER_ARGS', `missing ${flag}`);
    return found;
  };
  const pid = Number(value('--pid'));
  if (!Number.isInteger(pid) || pid <= 0)
    throw new GatewayError('REAPER_ARGS', `--pid must be a process id, not ${value('--pid')}`);
  return { session: value('--session'), pid, pidStart: value('--pid-start'), host: value('--host') };
}

/**
 * One reaping pass: every container, then network, labelled with exactly this owner (session,
 * pid, pid start time, host). The engine pre-filters by session and pid; `ownedBy` decides, so
 * another gateway's objects (another pid, or a recycled pid with another start time) stay, and so
 * do this gateway's persistent sandboxes (labelled `ringfence.persistent=1`), made to outlive it.
 */
export function reapOnce(docker: Docker, owner: Owner): Promise<SweepReport> {
  return removeManaged(docker, (labels) => ownedBy(labels, owner) && !isPersistent(labels), [
    `${LABEL.session}=${owner.session}`,
    `${LABEL.pid}=${owner.pid}`,
  ]);
}

export interface StartedReaper {
  readonly pid: number;
  /**
   * Kills it and resolves once it is gone, for a gateway that gives up its container runtime
   * before creating anything (nothing to remove, so it does not reap first).
   */
  stop(): Promise<void>;
}

/**
 * The gateway's side of the reaper: a detached `node` process, in a session of its own (so a
 * client that kills the gateway's process group does not kill it too), holding only a pipe from
 * this process as its stdin, never the gateway's stdio. When that pipe ends, whatever the cause
 * (SIGKILL included, or a clean exit after the gateway removed everything itself), it removes
 * what this gateway still owns and exits. Resolves once it answers `ready` (it reached the
 * engine); rejects with the reason otherwise, leaving nothing running.
 */
export async function startReaper(options: {
  home: string;
  owner: Owner;
  env: NodeJS.ProcessEnv;
  /** Told when the reaper exits while this gateway still runs. */
  onUnexpectedExit: (reason: string) => void;
  readyTimeoutMs?: number;
  main?: string;
  /** Aborted while it starts: it is killed (nothing exists yet for it to remove), and this rejects once it is gone. */
  signal?: AbortSignal;
}): Promise<StartedReaper> {
  const main = options.main ?? REAPER_MAIN;
  if (!existsSync(main))
    throw new GatewayError('BUILD_MISSING', `${main} is missing (rebuild with: npm run build)`);
  let logFd: number | undefined;
  try {
    mkdirSync(join(options.home, 'logs'), { recursive: true, mode: 0o700 });
    logFd = openSync(
      reaperLogPath(options.home),
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
  } catch {
    // Without its log the reaper still works; its failures are lost, not its job.
  }
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [main, ...ownerArgs(options.owner)], {
      detached: true,
      stdio: ['pipe', 'pipe', logFd ?? 'ignore'],
      env: options.env,
    });
  } finally {
    if (logFd !== undefined) closeSync(logFd);
  }
  const lifeline = child.stdin as Socket;
  // Nothing is ever written: an error here only means the reaper is gone, which `exit` reports.
  lifeline.on('error', () => {});
  const exited = (code: number | null, signal: NodeJS.Signals | null) =>
    new GatewayError('REAPER_START', `it exited (${signal ?? `code ${code}`})`);
  const alive = () => child.exitCode === null && child.signalCode === null;
  const gone = new Promise<void>((resolve) => {
    if (!alive()) resolve();
    else child.once('exit', () => resolve());
  });
  const kill = () => {
    if (!alive() || !child.pid) return;
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  let earlyExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  let abandon: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const timeoutMs = options.readyTimeoutMs ?? 15_000;
      const timer = setTimeout(
        () => reject(new GatewayError('REAPER_START', `it did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      earlyExit = (code, signal) => fail(exited(code, signal));
      abandon = () => {
        child.off('exit', earlyExit!);
        kill();
        void gone.then(() => fail(new GatewayError('REAPER_START', 'it was stopped before it was ready')));
      };
      child.once('error', fail);
      child.once('exit', earlyExit);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line !== READY_LINE) return;
        clearTimeout(timer);
        resolve();
      });
      if (options.signal?.aborted) abandon();
      else options.signal?.addEventListener('abort', abandon, { once: true });
    });
  } catch (error) {
    kill();
    throw error;
  } finally {
    if (abandon) options.signal?.removeEventListener('abort', abandon);
  }
  if (earlyExit) child.off('exit', earlyExit);
  const unexpected = (code: number | null, signal: NodeJS.Signals | null) =>
    options.onUnexpectedExit(exited(code, signal).message);
  child.once('exit', unexpected);
  child.stdout!.destroy();
  // Neither the child nor its pipe may keep this process alive: the gateway exits when its
  // client leaves, and that exit is what closes the pipe.
  lifeline.unref();
  child.unref();
  return {
    pid: child.pid!,
    stop: async () => {
      child.off('exit', unexpected);
      // Held until it is gone, so `gone` settles even if nothing else keeps this process alive.
      child.ref();
      kill();
      await gone;
    },
  };
}
