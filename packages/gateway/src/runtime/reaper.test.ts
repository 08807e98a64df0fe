import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LABEL, type Owner } from './labels.js';
import { ownerArgs, parseOwnerArgs, reaperLogPath, reapOnce, startReaper } from './reaper.js';

const owner: Owner = { session: 'sess-a', pid: 4242, pidStart: '777', host: 'aaaaaaaaaaaaaaaa' };
const labelsOf = (o: Owner) => ({
  [LABEL.managed]: '1',
  [LABEL.session]: o.session,
  [LABEL.pid]: String(o.pid),
  [LABEL.pidStart]: o.pidStart,
  [LABEL.host]: o.host,
});

function fakeEngine(objects: { Id: string; Labels: Record<string, string> }[]) {
  const removed: string[] = [];
  const filtersSeen: unknown[] = [];
  const docker = {
    listContainers: async (options: { filters: unknown }) => {
      filtersSeen.push(options.filters);
      return objects.map((o) => ({ ...o, Names: [`/${o.Id}`] }));
    },
    listNetworks: async () => objects.map((o) => ({ ...o, Name: `net-${o.Id}` })),
    listImages: async () => objects.map((o) => ({ ...o, RepoTags: [`ringfence-img-${o.Id}:1`] })),
    getContainer: (id: string) => ({ remove: async () => void removed.push(id) }),
    getImage: (reference: string) => ({ remove: async () => void removed.push(reference) }),
    getNetwork: (id: string) => ({
      inspect: async () => ({ Containers: {} }),
      remove: async () => void removed.push(id),
    }),
  } as unknown as Docker;
  return { docker, removed, filtersSeen };
}

describe('reapOnce', () => {
  it("removes exactly its gateway's containers, images and networks: never another pid, start time, session or host", async () => {
    const { docker, removed, filtersSeen } = fakeEngine([
      { Id: 'mine', Labels: labelsOf(owner) },
      { Id: 'other-pid', Labels: labelsOf({ ...owner, pid: 4243 }) },
      { Id: 'recycled-pid', Labels: labelsOf({ ...owner, pidStart: '778' }) },
      { Id: 'other-session', Labels: labelsOf({ ...owner, session: 'sess-b' }) },
      { Id: 'other-host', Labels: labelsOf({ ...owner, host: 'bbbbbbbbbbbbbbbb' }) },
      { Id: 'unmanaged', Labels: { ...labelsOf(owner), [LABEL.managed]: '0' } },
      { Id: 'persistent', Labels: { ...labelsOf(owner), [LABEL.persistent]: '1' } },
    ]);
    const report = await reapOnce(docker, owner);
    expect(removed.sort()).toEqual(['mine', 'mine', 'ringfence-img-mine:1']);
    expect(report).toEqual({
      containers: ['mine'],
      images: ['ringfence-img-mine:1'],
      networks: ['net-mine'],
      errors: [],
    });
    expect(filtersSeen[0]).toEqual({
      label: ['ringfence.managed=1', 'ringfence.session=sess-a', 'ringfence.pid=4242'],
    });
  });
});

describe('owner arguments', () => {
  it('round-trip, and a bad pid is refused', () => {
    expect(parseOwnerArgs(ownerArgs(owner))).toEqual(owner);
    expect(parseOwnerArgs(ownerArgs({ ...owner, pidStart: '' }))).toEqual({ ...owner, pidStart: '' });
    expect(() => parseOwnerArgs(['--session', 's', '--pid', 'x', '--pid-start', '', '--host', 'h'])).toThrow(
      /--pid must be a process id/,
    );
    expect(() => parseOwnerArgs(['--pid', '1'])).toThrow(/missing --session/);
  });
});

describe('startReaper', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-reaper-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const script = async (body: string) => {
    const path = join(dir, 'main.mjs');
    await writeFile(path, body);
    await chmod(path, 0o644);
    return path;
  };
  const start = (
    main: string,
    readyTimeoutMs = 10_000,
    more: { signal?: AbortSignal; onUnexpectedExit?: (reason: string) => void } = {},
  ) =>
    startReaper({
      home: join(dir, 'home'),
      owner,
      env: {},
      onUnexpectedExit: more.onUnexpectedExit ?? (() => {}),
      readyTimeoutMs,
      main,
      ...(more.signal ? { signal: more.signal } : {}),
    });
  const isRunning = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('is killed, and rejects once it is gone, when the gateway gives up while it starts', async () => {
    const pidFile = join(dir, 'pid');
    const main = await script(
      `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`,
    );
    const abandon = new AbortController();
    const starting = start(main, 60_000, { signal: abandon.signal });
    starting.catch(() => {});
    const pid = await vi.waitFor(async () => Number(await readFile(pidFile, 'utf8')), { timeout: 20_000 });
    try {
      abandon.abort();
      await expect(starting).rejects.toThrow(/stopped before it was ready/);
      expect(isRunning(pid)).toBe(false);
    } finally {
      if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('stop() kills a reaper that is watching, without reporting it as an unexpected exit', async () => {
    const main = await script('process.stdout.write("ready\\n"); setInterval(() => {}, 1000);');
    const unexpected: string[] = [];
    const reaper = await start(main, 10_000, { onUnexpectedExit: (reason) => unexpected.push(reason) });
    try {
      expect(isRunning(reaper.pid)).toBe(true);
      await reaper.stop();
      expect(isRunning(reaper.pid)).toBe(false);
      expect(unexpected).toEqual([]);
    } finally {
      if (isRunning(reaper.pid)) process.kill(reaper.pid, 'SIGKILL');
    }
  });

  it('rejects with what happened when the script is missing, exits early or never answers', async () => {
    await expect(start(join(dir, 'absent.mjs'))).rejects.toThrow(/absent\.mjs is missing .*npm run build/);
    await expect(
      start(await script('process.stderr.write("no engine\\n"); process.exit(3);')),
    ).rejects.toThrow(/exited \(code 3\)/);
    expect(await readFile(reaperLogPath(join(dir, 'home')), 'utf8')).toContain('no engine');
    await expect(start(await script('setInterval(() => {}, 1000);'), 500)).rejects.toThrow(
      /did not answer within 500 ms/,
    );
  });

  it('runs in a session of its own, with its owner on its command line, once it answers ready', async () => {
    const main = await script(
      'process.stdout.write("ready\\n"); process.stdin.resume(); process.stdin.on("end", () => process.exit(0));',
    );
    const { pid } = await start(main);
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      // Field 6 is the session id: its own pid, not ours.
      expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]).toBe(String(pid));
      const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      expect(cmdline).toEqual(expect.arrayContaining(['--session', 'sess-a', '--pid', '4242']));
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });
});
