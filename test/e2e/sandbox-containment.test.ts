import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import {
  docker,
  expectedProcessLimits,
  impostorImage,
  nodeBase,
  refusalFor,
  removeTestContainers,
  testLabels,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

const KEEP_ALIVE = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];
const ALLOW_REFUSED = (await refusalFor('allow')) !== undefined;

/**
 * What a program in the sandbox sees of its own containment: ids, capabilities, the cgroup limits
 * (v2 files, else v1), process limits, engine sockets, and writes to each kind of place.
 */
const LOOK_AROUND = `
const fs = require('fs');
const read = (...paths) => { for (const p of paths) { try { return fs.readFileSync(p, 'utf8').trim(); } catch {} } return 'unreadable'; };
const tryWrite = (p) => { try { fs.writeFileSync(p, 'sandbox'); return 'written'; } catch (e) { return 'refused: ' + e.code; } };
const status = fs.readFileSync('/proc/self/status', 'utf8');
const field = (n) => new RegExp('^' + n + ':\\\\s*(.*)$', 'm').exec(status)[1].trim();
const limits = fs.readFileSync('/proc/self/limits', 'utf8');
const row = (n) => { const m = new RegExp('^' + n + ' +(\\\\S+) +(\\\\S+)', 'm').exec(limits); return { soft: m[1], hard: m[2] }; };
const sockets = ['/var/run/docker.sock', '/run/docker.sock', '/run/podman/podman.sock', '/var/run/podman/podman.sock', '/run/containerd/containerd.sock']
  .filter((p) => fs.existsSync(p));
console.log(JSON.stringify({
  uid: process.getuid(), gid: process.getgid(),
  capEff: field('CapEff'), capPrm: field('CapPrm'), capBnd: field('CapBnd'), capAmb: field('CapAmb'),
  noNewPrivs: field('NoNewPrivs'),
  memoryMax: read('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'),
  swapMax: read('/sys/fs/cgroup/memory.swap.max', '/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes'),
  pidsMax: read('/sys/fs/cgroup/pids.max', '/sys/fs/cgroup/pids/pids.max'),
  cpuMax: fs.existsSync('/sys/fs/cgroup/cpu.max') ? read('/sys/fs/cgroup/cpu.max')
    : read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us', '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us') + ' ' + read('/sys/fs/cgroup/cpu/cpu.cfs_period_us', '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us'),
  nofile: row('Max open files'), nproc: row('Max processes'),
  sockets, sockMounts: read('/proc/self/mounts').split('\\n').map((l) => l.split(' ')[1]).filter((m) => /\\.sock|docker|podman|containerd/.test(m)),
  roWrite: tryWrite('/workspace/data/new.txt'), rwWrite: tryWrite('/workspace/out/result.txt'),
  etcWrite: tryWrite('/etc/sandbox'), tmpWrite: tryWrite('/tmp/sandbox'),
}));`;

interface Seen {
  uid: number;
  gid: number;
  capEff: string;
  capPrm: string;
  capBnd: string;
  capAmb: string;
  noNewPrivs: string;
  memoryMax: string;
  swapMax: string;
  pidsMax: string;
  cpuMax: string;
  nofile: { soft: string; hard: string };
  nproc: { soft: string; hard: string };
  sockets: string[];
  sockMounts: string[];
  roWrite: string;
  rwWrite: string;
  etcWrite: string;
  tmpWrite: string;
}

const json = (result: unknown) => JSON.parse(firstText(result)) as Record<string, unknown>;

describe('a sandbox, seen from inside, and what it leaves alone', () => {
  const session = uniqueName('sbxin');
  let home: string;
  let served: ServedClient;
  let readOnlyRoot: string;
  let writableRoot: string;
  let impostor: string;
  const env = () => ({ RINGFENCE_HOME: home });
  const call = (name: string, args: Record<string, unknown>) =>
    served.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  // The person's own networks: one under the name a sandbox "clash" of this session would get,
  // one forging a sandbox's labels (name and session) without ringfence's owner labels.
  const personNetworks = [`ringfence-mcp-sandbox-clash-${session}-in`, uniqueName('rf-person-net')];
  const personNetworksLeft = async () =>
    (await docker.listNetworks({ filters: { label: ['ringfence.test'] } }))
      .map((n) => n.Name)
      .filter((name) => personNetworks.includes(name))
      .sort();

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    readOnlyRoot = await mkdtemp(join(dir, 'ro-'));
    writableRoot = await mkdtemp(join(dir, 'rw-'));
    await mkdir(join(readOnlyRoot, 'data'));
    await writeFile(join(readOnlyRoot, 'data', 'readme.txt'), 'shared text');
    await mkdir(join(writableRoot, 'out'));
    // As root, the gateway runs sandboxes as 65532 (never root), who must be able to write here.
    if (process.getuid?.() === 0) await chmod(join(writableRoot, 'out'), 0o777);
    for (const dirPath of [dir, readOnlyRoot, writableRoot, join(readOnlyRoot, 'data')])
      await chmod(dirPath, 0o755);
    impostor = await impostorImage();
    // A third-party server registered as "sandbox": its tool `run` would be exposed as sandbox_run.
    const added = await ringfence(['mcp', 'add', 'sandbox', '--image', impostor], env());
    expect(added.code, added.stderr).toBe(0);
    await docker.createNetwork({ Name: personNetworks[0]!, Labels: testLabels() });
    await docker.createNetwork({
      Name: personNetworks[1]!,
      Labels: {
        ...testLabels(),
        'ringfence.sandbox': 'box',
        'ringfence.session': session,
        'ringfence.role': 'network',
      },
    });
    served = await connectStdio(
      home,
      env(),
      {},
      {
        args: [
          '--session',
          session,
          '--sandbox-tools',
          '--sandbox-image',
          await nodeBase(),
          '--allow-mount',
          readOnlyRoot,
          '--allow-mount',
          `${writableRoot}:rw`,
        ],
      },
    );
  });

  afterAll(async () => {
    await served?.close();
    await removeTestContainers();
  });

  it('the name "ringfence" cannot be registered by a third party', async () => {
    const refused = await ringfence(['mcp', 'add', 'ringfence', '--image', impostor], env());
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/ringfence/);
  });

  it("a contained server exposing tools under ringfence's names is skipped; the calls reach ringfence", async () => {
    const { tools } = await served.client.listTools();
    const names = tools.map((t) => t.name);
    expect(
      names.filter((n) => n === 'sandbox_run'),
      served.stderr(),
    ).toHaveLength(1);
    expect(names.filter((n) => n === 'ringfence_status')).toHaveLength(1);
    // Its other tools are served as usual, under its prefix.
    expect(names).toEqual(
      expect.arrayContaining(['sandbox_honest', 'sandbox_sandbox_run', 'sandbox_ringfence_status']),
    );
    expect(tools.find((t) => t.name === 'sandbox_run')?.description).not.toMatch(/impostor/);
    expect(served.stderr()).toMatch(/skipped.*sandbox_run|sandbox_run.*skipped/);
    const run = await call('sandbox_run', { name: 'nowhere', command: ['true'] });
    expect(firstText(run)).toMatch(/there is no sandbox "nowhere" in this session/);
    expect(firstText(await call('sandbox_honest', {}))).toBe('impostor answered honest');
  });

  it("under --only, a tool named exactly like one of ringfence's is skipped too", async () => {
    const only = await connectStdio(
      home,
      env(),
      {},
      {
        args: [
          '--session',
          uniqueName('sbxonly'),
          '--only',
          'sandbox',
          '--sandbox-tools',
          '--sandbox-image',
          await nodeBase(),
        ],
      },
    );
    try {
      const names = (await only.client.listTools()).tools.map((t) => t.name);
      // The gateway's stderr says why, should a name be missing.
      expect(
        names.filter((n) => n === 'sandbox_run'),
        only.stderr(),
      ).toHaveLength(1);
      expect(
        names.filter((n) => n === 'ringfence_status'),
        only.stderr(),
      ).toHaveLength(1);
      expect(names, only.stderr()).toEqual(expect.arrayContaining(['run', 'honest']));
      expect(only.stderr()).toMatch(/skipped.*sandbox_run|sandbox_run.*skipped/);
      const status = json(await only.client.callTool({ name: 'ringfence_status', arguments: {} }));
      expect(status.images).toEqual([await nodeBase()]);
      const run = await only.client.callTool({
        name: 'sandbox_run',
        arguments: { name: 'x', command: ['true'] },
      });
      expect(firstText(run)).toMatch(/there is no sandbox "x"/);
      expect(firstText(await only.client.callTool({ name: 'run', arguments: {} }))).toBe(
        'impostor answered run',
      );
    } finally {
      await only.close();
    }
  });

  it('limits, identity and mounts as the program inside sees them', async () => {
    const created = await call('sandbox_create', {
      name: 'box',
      image: await nodeBase(),
      command: KEEP_ALIVE,
      mounts: [
        { path: join(readOnlyRoot, 'data'), mode: 'ro' },
        { path: join(writableRoot, 'out'), mode: 'rw' },
      ],
    });
    expect(created.isError, firstText(created)).toBeFalsy();
    const ran = json(await call('sandbox_run', { name: 'box', command: ['node', '-e', LOOK_AROUND] }));
    expect(ran.exit_code, String(ran.stderr)).toBe(0);
    const seen = JSON.parse(String(ran.stdout)) as Seen;
    expect(seen.uid).not.toBe(0);
    expect(seen.gid).not.toBe(0);
    for (const set of [seen.capEff, seen.capPrm, seen.capBnd, seen.capAmb])
      expect(set).toBe('0000000000000000');
    expect(seen.noNewPrivs).toBe('1');
    expect(seen.memoryMax).toBe(String(512 * 1024 * 1024));
    // No swap beyond the memory limit: v2 counts swap apart (0), v1 memory and swap together.
    expect(seen.swapMax).toMatch(new RegExp(`^(0|${512 * 1024 * 1024})$`));
    expect(seen.pidsMax).toBe('256');
    // One CPU: a quota of one period (v2 cpu.max, or v1 cfs quota and period).
    expect(seen.cpuMax).toBe('100000 100000');
    const { nofile, nproc } = expectedProcessLimits();
    expect(seen.nofile.hard).toBe(String(nofile.hard));
    expect(seen.nproc).toEqual({ soft: String(nproc.soft), hard: String(nproc.hard) });
    expect(seen.sockets).toEqual([]);
    expect(seen.sockMounts).toEqual([]);
    expect(seen.roWrite).toBe('refused: EROFS');
    expect(seen.rwWrite).toBe('written');
    expect(await readFile(join(writableRoot, 'out', 'result.txt'), 'utf8')).toBe('sandbox');
    expect(seen.etcWrite).toMatch(/^refused: (EACCES|EROFS)$/);
    expect(seen.tmpWrite).toBe('written');
  });

  it('a command stopped at its timeout or output cap is gone: what it would do later never happens', async () => {
    // Each writes into the writable mount (which outlives a restart) after it was to be stopped.
    const late = (file: string, flood: boolean) => [
      'node',
      '-e',
      `setTimeout(() => require('fs').writeFileSync('/workspace/out/${file}', 'too late'), 4000);
       ${flood ? "setInterval(() => process.stdout.write('x'.repeat(4096)), 10);" : ''}`,
    ];
    const timedOut = await call('sandbox_run', {
      name: 'box',
      command: late('after-timeout', false),
      timeout_seconds: 1,
    });
    expect(JSON.parse(firstText(timedOut)).stopped).toMatch(/timeout_seconds/);
    const capped = await call('sandbox_run', {
      name: 'box',
      command: late('after-cap', true),
      max_output_bytes: 100,
    });
    expect(JSON.parse(firstText(capped)).stopped).toMatch(/max_output_bytes/);
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const out = json(
      await call('sandbox_run', {
        name: 'box',
        command: ['node', '-e', "console.log(require('fs').readdirSync('/workspace/out').join(','))"],
      }),
    );
    expect(out.stdout).toBe('result.txt\n');
  });

  it("the person's networks are untouched by a name clash, a delete and the gateway's close", async () => {
    if (!ALLOW_REFUSED) {
      // Its internal network would be named like the person's: the create fails, the person's stays.
      const clash = await call('sandbox_create', {
        name: 'clash',
        image: await nodeBase(),
        hosts: ['example.invalid'],
        command: KEEP_ALIVE,
      });
      expect(clash.isError).toBe(true);
      expect(await personNetworksLeft()).toEqual([...personNetworks].sort());
      json(
        await call('sandbox_create', {
          name: 'net',
          image: await nodeBase(),
          hosts: ['example.invalid'],
          command: KEEP_ALIVE,
        }),
      );
      json(await call('sandbox_delete', { name: 'net' }));
    }
    // "box" has the name the forged network claims.
    const deleted = json(await call('sandbox_delete', { name: 'box' }));
    expect(JSON.stringify(deleted)).not.toContain(personNetworks[1]);
    expect(await personNetworksLeft()).toEqual([...personNetworks].sort());
    json(await call('sandbox_create', { name: 'box', image: await nodeBase(), command: KEEP_ALIVE }));
    await served.close();
    const deadline = Date.now() + 30_000;
    const mine = () =>
      docker.listContainers({ all: true, filters: { label: [`ringfence.session=${session}`] } });
    while ((await mine()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(await mine()).toEqual([]);
    expect(await personNetworksLeft()).toEqual([...personNetworks].sort());
  });
});
