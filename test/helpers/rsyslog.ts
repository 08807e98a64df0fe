import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { repoRoot } from './cli.js';
import { track } from './processes.js';

/** Debian's rsyslogd (and its gtls driver), installed by scripts/ensure-rsyslog when missing. */
export function ensureRsyslog(): void {
  execFileSync(`${repoRoot}scripts/ensure-rsyslog`, {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 600_000,
  });
}

export interface RsyslogTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * A private rsyslogd: imtcp on 127.0.0.1:port only (octet-counted RFC 5424 understood), every
 * message's MSG written as one line to `output`, no system log read or written, its own pid file
 * and work directory. Started in the foreground (-n) so this process holds its pid; stopped by it.
 */
export class PrivateRsyslog {
  private child: ChildProcess | undefined;
  stderr = '';

  constructor(
    readonly dir: string,
    readonly port: number,
    readonly output: string,
    readonly tls?: RsyslogTls,
  ) {}

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const conf = join(this.dir, 'rsyslog.conf');
    const tls = this.tls;
    await writeFile(
      conf,
      [
        `global(workDirectory="${this.dir}" maxMessageSize="256k"${
          tls
            ? ` defaultNetstreamDriver="gtls" defaultNetstreamDriverCAFile="${tls.ca}" defaultNetstreamDriverCertFile="${tls.cert}" defaultNetstreamDriverKeyFile="${tls.key}"`
            : ''
        })`,
        tls
          ? 'module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")'
          : 'module(load="imtcp")',
        `input(type="imtcp" address="127.0.0.1" port="${this.port}")`,
        'template(name="msgonly" type="string" string="%msg%\\n")',
        `action(type="omfile" file="${this.output}" template="msgonly")`,
        '',
      ].join('\n'),
    );
    const child = track(
      spawn('/usr/sbin/rsyslogd', ['-n', '-f', conf, '-i', join(this.dir, 'rsyslogd.pid')], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.child = child;
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`rsyslogd exited at start: ${this.stderr}`);
      if (await listening(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`rsyslogd did not listen on 127.0.0.1:${this.port}: ${this.stderr}`);
  }

  /** SIGTERM by pid (rsyslogd writes what it queued, then exits), waiting for the exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  async lines(): Promise<string[]> {
    return (await readFile(this.output, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** What the receiver holds: audit entries (by seq, in arrival order) and anchors. */
export function received(lines: readonly string[]): {
  seqs: number[];
  anchors: { seq: number; hash: string }[];
} {
  const seqs: number[] = [];
  const anchors: { seq: number; hash: string }[] = [];
  for (const line of lines) {
    const value = JSON.parse(line.slice(line.indexOf('{')));
    if (value.type === 'ringfence.anchor') anchors.push({ seq: value.seq, hash: value.hash });
    else if (typeof value.prev === 'string') seqs.push(value.seq);
  }
  return { seqs, anchors };
}
