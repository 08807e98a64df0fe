import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildContextImage } from '@ringfence/gateway/images';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, ringfence } from '../helpers/cli.js';
import {
  docker,
  listContainers,
  managedObjects,
  nodeBase,
  reaperPids,
  removeTestContainers,
  TEST_LABEL,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';
import { stopAll } from '../helpers/processes.js';
import { type LocalRegistry, pushThenUntag, startLocalRegistry } from '../helpers/registry.js';

// node-base has node and nothing else (no shell): main processes and commands are node itself.
const KEEP_ALIVE = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];
// A main process that says something on each stream, one line with a terminal escape in it.
const TALKING = [
  'node',
  '-e',
  "console.log('main started'); console.log('\\u001b[31mred'); console.error('main err'); setInterval(() => {}, 1 << 30)",
];
const LIFECYCLE_TOOLS = [
  'sandbox_start',
  'sandbox_stop',
  'sandbox_logs',
  'sandbox_exec',
  'image_list',
  'image_pull',
];

interface AuditLine {
  type: string;
  session: string;
  sandbox?: string;
  refs: Record<string, unknown>;
}

// biome-ignore lint/suspicious/noExplicitAny: tool results are JSON read field by field in assertions
const json = (result: unknown) => JSON.parse(firstText(result)) as Record<string, any>;
const present = (image: string) =>
  docker
    .getImage(image)
    .inspect()
    .then(
      () => true,
      () => false,
    );

describe("ringfence's own tools: a sandbox's life (stop, start, logs, exec), images, persistence", () => {
  let home: string;
  let policyDir: string;
  let base: string;
  /** node-base with /work owned by the sandbox user: somewhere it may write outside the /tmp tmpfs. */
  let workImage: string;
  let registry: LocalRegistry;
  const refs = { allowed: '', denied: '', stranger: '' };
  let a: { client: Client; pid: number };
  const sessions = { a: uniqueName('life-a'), b: uniqueName('life-b'), c: uniqueName('life-c') };
  const env = () => ({ RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir });
  const audit = async () =>
    (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditLine);
  const callOn = (client: Client, name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const call = (name: string, args: Record<string, unknown>) => callOn(a.client, name, args);

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    policyDir = await mkdtemp(join(dir, 'etc-'));
    base = await nodeBase();
    workImage = (
      await buildContextImage(docker, {
        repository: 'ringfence-test/sandbox-work',
        context: {
          dockerfile: `FROM ${base}\nCOPY --chown=65532:65532 work /work\n`,
          files: [
            { path: 'work', mode: 0o755, source: { directory: true } },
            { path: 'work/.keep', mode: 0o644, source: { content: Buffer.from('') } },
          ],
        },
        labels: { [TEST_LABEL]: '1' },
      })
    ).ref;
    registry = await startLocalRegistry();
    const tag = uniqueName('t');
    for (const which of ['allowed', 'denied', 'stranger'] as const) {
      refs[which] = `${registry.address}/ringfence-test/sandbox-base:${which}-${tag}`;
      await pushThenUntag(docker, base, refs[which]);
    }
    const org = await makeOrg(join(dir, 'org'));
    const policy = await signPolicy(
      org,
      // `denied` is one the person names (--sandbox-image) but the organisation does not admit.
      policyDocument({ default_egress: 'deny', allowed_mcp: [base, workImage, refs.allowed] }),
      'sandbox-lifecycle-policy',
    );
    await install(policy, org, env());
    const images = [base, workImage, refs.allowed, refs.denied].flatMap((image) => [
      '--sandbox-image',
      image,
    ]);
    // Gateway A leads a process group of its own (setsid), so the test can kill it whole with -9.
    const transport = new StdioClientTransport({
      command: 'setsid',
      args: [
        process.execPath,
        cliBin,
        'mcp',
        'serve',
        '--session',
        sessions.a,
        '--sandbox-tools',
        '--sandbox-persistent',
        '--sandbox',
        'assistant-box',
        ...images,
      ],
      env: { ...(process.env as Record<string, string>), ...env() },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e-sandbox-life', version: '1.0.0' });
    await client.connect(transport);
    a = { client, pid: transport.pid! };
  });

  afterAll(async () => {
    await a?.client.close().catch(() => {});
    for (const name of ['lasting', 'second']) await ringfence(['sandbox', 'rm', name], env()).catch(() => {});
    for (const ref of Object.values(refs))
      if (ref)
        await docker
          .getImage(ref)
          .remove()
          .catch(() => {});
    await registry?.stop();
    await stopAll();
    await removeTestContainers();
  });

  it('lists the lifecycle and image tools, each saying what it touches; status no longer calls them unbuilt', async () => {
    const { tools } = await a.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of LIFECYCLE_TOOLS) expect(names).toContain(name);
    for (const tool of tools.filter((t) => LIFECYCLE_TOOLS.includes(t.name)))
      expect(tool.description).toMatch(/Touches/);
    const status = json(await call('ringfence_status', {}));
    // Every sandbox tool is built now: the field is gone, or names none of these.
    expect(((status.not_built_yet as string[] | undefined) ?? []).join(' ')).not.toMatch(
      /start|stop|logs|exec|pull/,
    );
  });

  it('stop keeps the files, start brings the sandbox back with the same containment', async () => {
    expect(
      json(await call('sandbox_create', { name: 'keep', image: workImage, command: TALKING })),
    ).toMatchObject({
      created: { name: 'keep', state: 'running', persistent: false },
    });
    const container = docker.getContainer(`ringfence-sandbox-${sessions.a}-keep`);
    const before = await container.inspect();
    const wrote = json(
      await call('sandbox_run', {
        name: 'keep',
        command: ['node', '-e', "require('fs').writeFileSync('/work/note.txt', 'kept across a stop')"],
      }),
    );
    expect(wrote.exit_code).toBe(0);
    expect(json(await call('sandbox_stop', { name: 'keep' })).stopped).toMatchObject({ state: 'exited' });
    const refused = await call('sandbox_run', { name: 'keep', command: ['node', '-e', '0'] });
    expect(refused.isError).toBe(true);
    expect(firstText(refused)).toMatch(
      /ringfence refused sandbox_run: .*not running; start it with sandbox_start/,
    );
    expect(json(await call('sandbox_start', { name: 'keep' })).started).toMatchObject({ state: 'running' });
    const read = json(
      await call('sandbox_run', {
        name: 'keep',
        command: ['node', '-e', "process.stdout.write(require('fs').readFileSync('/work/note.txt'))"],
      }),
    );
    expect(read).toMatchObject({ exit_code: 0, stdout: 'kept across a stop' });
    const after = await container.inspect();
    expect(after.Id).toBe(before.Id);
    expect(after.Config.User).toBe(before.Config.User);
    expect(after.Config.Labels).toEqual(before.Config.Labels);
    for (const key of [
      'CapDrop',
      'SecurityOpt',
      'NetworkMode',
      'Memory',
      'PidsLimit',
      'NanoCpus',
      'Ulimits',
      'Privileged',
    ])
      expect((after.HostConfig as Record<string, unknown>)[key]).toEqual(
        (before.HostConfig as Record<string, unknown>)[key],
      );
  });

  it("logs show the main process's output, rendered, each stream apart; tail keeps the end", async () => {
    const logs = json(await call('sandbox_logs', { name: 'keep' }));
    // Said once before the stop and once after the start.
    expect(logs.stdout.text.match(/main started/g)).toHaveLength(2);
    // The escape the sandbox printed reaches the assistant as text, never as an escape to obey.
    expect(logs.stdout.text).toContain('\\u{1B}[31mred');
    expect(logs.stdout.text).not.toContain('\u001b');
    expect(logs.stdout.escaped).toBeGreaterThanOrEqual(2);
    expect(logs.stderr.text).toBe('main err\nmain err\n');
    // `tail` counts lines of the log as the engine keeps it, both streams together: the last 3
    // are the second run's (the two streams' lines may interleave in any order).
    const last = json(await call('sandbox_logs', { name: 'keep', tail: 3 }));
    expect(last.stdout.text).toBe('main started\n\\u{1B}[31mred\n');
    expect(last.stderr.text).toBe('main err\n');
    const one = json(await call('sandbox_logs', { name: 'keep', tail: 1 }));
    expect(`${one.stdout.text}${one.stderr.text}`.split('\n').filter(Boolean)).toHaveLength(1);
    const capped = json(await call('sandbox_logs', { name: 'keep', max_bytes: 4 }));
    expect(capped.stdout.text).toBe('red\n');
    expect(capped.stdout.dropped_bytes).toBeGreaterThan(0);
  });

  it('exec runs in the background; its output and exit code are read later with sandbox_logs', async () => {
    const startedAt = Date.now();
    const started = json(
      await call('sandbox_exec', {
        name: 'keep',
        command: [
          'node',
          '-e',
          "console.log('early'); setTimeout(() => { console.log('late output'); console.error('oops'); process.exit(3) }, 1500)",
        ],
      }),
    );
    expect(Date.now() - startedAt).toBeLessThan(1500);
    expect(started.exec).toMatch(/^x[0-9a-f]{12}$/);
    const running = json(await call('sandbox_logs', { name: 'keep', exec: started.exec }));
    expect(running).toMatchObject({ running: true, exit_code: null });
    await expect
      .poll(async () => json(await call('sandbox_logs', { name: 'keep', exec: started.exec })).running, {
        timeout: 15_000,
        interval: 250,
      })
      .toBe(false);
    const ended = json(await call('sandbox_logs', { name: 'keep', exec: started.exec }));
    expect(ended).toMatchObject({ exit_code: 3, running: false });
    expect(ended.stdout.text).toBe('early\nlate output\n');
    expect(ended.stderr.text).toBe('oops\n');
    // The main process's log lists it.
    expect(json(await call('sandbox_logs', { name: 'keep' })).background).toEqual(
      expect.arrayContaining([{ exec: started.exec, running: false, exit_code: 3 }]),
    );
    const unknown = await call('sandbox_logs', { name: 'keep', exec: 'x000000000000' });
    expect(firstText(unknown)).toMatch(
      /ringfence refused sandbox_logs: .*no background command x000000000000/,
    );
  });

  it('at most 4 background commands run at once in a sandbox; a stop ends them, with no exit code', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(json(await call('sandbox_exec', { name: 'keep', command: KEEP_ALIVE })).exec as string);
    const fifth = await call('sandbox_exec', { name: 'keep', command: KEEP_ALIVE });
    expect(fifth.isError).toBe(true);
    expect(firstText(fifth)).toMatch(/4 background commands already run in the sandbox "keep"/);
    await call('sandbox_stop', { name: 'keep' });
    for (const id of ids)
      await expect
        .poll(async () => json(await call('sandbox_logs', { name: 'keep', exec: id })).running, {
          timeout: 10_000,
        })
        .toBe(false);
    const stopped = await call('sandbox_exec', { name: 'keep', command: KEEP_ALIVE });
    expect(firstText(stopped)).toMatch(/not running; start it with sandbox_start/);
  });

  it('image_list shows the allowed images: present or not, size, whether the policy admits each', async () => {
    const { images } = json(await call('image_list', {}));
    const by = Object.fromEntries(
      (images as { image: string; size?: number; refusal?: string }[]).map((i) => [i.image, i]),
    );
    expect(Object.keys(by).sort()).toEqual([base, workImage, refs.allowed, refs.denied].sort());
    expect(by[base]).toMatchObject({ present: true, allowed_by_policy: true });
    expect(by[base]?.size).toBeGreaterThan(0);
    expect(by[refs.allowed]).toMatchObject({ present: false, allowed_by_policy: true });
    expect(by[refs.denied]).toMatchObject({ present: false, allowed_by_policy: false });
    expect(by[refs.denied]?.refusal).toMatch(/allowed_mcp/);
  });

  it('image_pull fetches an allowed image from a registry on loopback; the others are refused, nothing fetched', async () => {
    const pulled = json(await call('image_pull', { image: refs.allowed }));
    expect(pulled).toMatchObject({ image: refs.allowed, pulled: true, present: true });
    expect(await present(refs.allowed)).toBe(true);
    // And a sandbox may be made from it.
    json(await call('sandbox_create', { name: 'pulled', image: refs.allowed, command: KEEP_ALIVE }));
    expect(
      json(await call('sandbox_run', { name: 'pulled', command: ['node', '-e', 'console.log(1)'] })),
    ).toMatchObject({
      exit_code: 0,
    });
    await call('sandbox_delete', { name: 'pulled' });

    const stranger = await call('image_pull', { image: refs.stranger });
    expect(stranger.isError).toBe(true);
    expect(firstText(stranger)).toMatch(
      /ringfence refused image_pull: .*not one the person allowed .*--sandbox-image/,
    );
    expect(await present(refs.stranger)).toBe(false);

    const denied = await call('image_pull', { image: refs.denied });
    expect(denied.isError).toBe(true);
    expect(firstText(denied)).toMatch(
      /ringfence refused image_pull: .*does not allow the image .*Nothing was pulled/,
    );
    expect(await present(refs.denied)).toBe(false);
  });

  it('persistent sandboxes: refused with hosts; labelled so; shown by sandbox ls', async () => {
    const withHosts = await call('sandbox_create', {
      name: 'far',
      image: base,
      hosts: ['example.invalid'],
      persistent: true,
      command: KEEP_ALIVE,
    });
    expect(firstText(withHosts)).toMatch(
      /ringfence refused sandbox_create: a persistent sandbox cannot have hosts/,
    );
    expect(
      json(await call('sandbox_create', { name: 'lasting', image: base, persistent: true, command: TALKING }))
        .created,
    ).toMatchObject({ name: 'lasting', persistent: true });
    json(await call('sandbox_create', { name: 'fleeting', image: base, command: KEEP_ALIVE }));
    const labels = (await docker.getContainer(`ringfence-sandbox-${sessions.a}-lasting`).inspect()).Config
      .Labels;
    // Not `ringfence.managed=1`, which every reaper and sweep (of any version) selects.
    expect(labels).toMatchObject({
      'ringfence.managed': 'persistent',
      'ringfence.persistent': '1',
      'ringfence.sandbox': 'lasting',
    });
    expect(labels['ringfence.home']).toMatch(/^[0-9a-f]{32}$/);
    const ls = await ringfence(['sandbox', 'ls', '--json'], env());
    const listed = JSON.parse(ls.stdout).sandboxes as { name: string; persistent: boolean }[];
    expect(listed.find((s) => s.name === 'lasting')?.persistent).toBe(true);
    expect(listed.find((s) => s.name === 'fleeting')?.persistent).toBe(false);
    const text = await ringfence(['sandbox', 'ls'], env());
    expect(text.stdout).toMatch(/^lasting .*persistent$/m);
  });

  it('--sandbox NAME is in every audit entry of that gateway; each sandbox tool call names the sandbox it acts on', async () => {
    const entries = (await audit()).filter((e) => e.session === sessions.a);
    expect(entries.length).toBeGreaterThan(10);
    for (const entry of entries) expect(entry.sandbox, JSON.stringify(entry)).toBe('assistant-box');
    const calls = entries.filter((e) => e.type === 'mcp.decision' && e.refs.phase === 'call');
    const stops = calls.filter((e) => e.refs.tool === 'sandbox_stop');
    expect(stops.length).toBeGreaterThan(0);
    for (const entry of stops) expect(entry.refs.sandbox).toBe('keep');
    const results = entries.filter((e) => e.type === 'mcp.result' && e.refs.tool === 'sandbox_logs');
    for (const entry of results) expect(entry.refs.sandbox).toBe('keep');
    // image_pull acts on no sandbox: no sandbox in its refs (the envelope still names the gateway's).
    for (const entry of calls.filter((e) => e.refs.tool === 'image_pull'))
      expect(entry.refs.sandbox).toBeUndefined();
    const verified = await ringfence(['audit', 'verify'], env());
    expect(verified.code, verified.stderr + verified.stdout).toBe(0);
  });

  it('kill -9 of the gateway: the persistent sandbox stays, every other one goes', async () => {
    expect(await reaperPids(sessions.a)).toHaveLength(1);
    process.kill(-a.pid, 'SIGKILL');
    const names = async () =>
      (await listContainers(docker, { all: true, filters: { label: [`ringfence.session=${sessions.a}`] } }))
        .map((c) => c.Names[0]!.replace(/^\//, ''))
        .sort();
    await expect
      .poll(names, { timeout: 20_000, interval: 250 })
      .toEqual([`ringfence-sandbox-${sessions.a}-lasting`]);
    // The reaper ran all its passes (at 0, 1 and 3 s) and exited: what is left now, it left.
    await expect.poll(() => reaperPids(sessions.a), { timeout: 20_000, interval: 250 }).toEqual([]);
    expect(await names()).toEqual([`ringfence-sandbox-${sessions.a}-lasting`]);
    const lasting = await docker.getContainer(`ringfence-sandbox-${sessions.a}-lasting`).inspect();
    expect(lasting.State.Running).toBe(true);
  });

  it('a later gateway of the same home sees it, runs in it, and leaves it at its close; one without --sandbox-persistent neither sees nor makes one', async () => {
    const b: ServedClient = await connectStdio(
      home,
      env(),
      {},
      {
        args: ['--session', sessions.b, '--sandbox-tools', '--sandbox-persistent', '--sandbox-image', base],
      },
    );
    try {
      const listed = json(await callOn(b.client, 'sandbox_list', {}));
      expect(listed.sandboxes).toEqual([
        expect.objectContaining({ name: 'lasting', persistent: true, session: sessions.a, state: 'running' }),
      ]);
      expect(
        json(
          await callOn(b.client, 'sandbox_run', {
            name: 'lasting',
            command: ['node', '-e', 'console.log(6 * 7)'],
          }),
        ),
      ).toMatchObject({ exit_code: 0, stdout: '42\n' });
      const taken = await callOn(b.client, 'sandbox_create', {
        name: 'lasting',
        image: base,
        command: KEEP_ALIVE,
      });
      expect(firstText(taken)).toMatch(/already exists/);
      // One it makes itself, persistent, and one that is not: its clean close leaves only the first.
      json(
        await callOn(b.client, 'sandbox_create', {
          name: 'second',
          image: base,
          persistent: true,
          command: KEEP_ALIVE,
        }),
      );
      json(await callOn(b.client, 'sandbox_create', { name: 'brief', image: base, command: KEEP_ALIVE }));
    } finally {
      await b.close();
    }
    const c: ServedClient = await connectStdio(
      home,
      env(),
      {},
      {
        args: ['--session', sessions.c, '--sandbox-tools', '--sandbox-image', base],
      },
    );
    try {
      expect(json(await callOn(c.client, 'sandbox_list', {})).sandboxes).toEqual([]);
      const refused = await callOn(c.client, 'sandbox_create', {
        name: 'another',
        image: base,
        persistent: true,
        command: KEEP_ALIVE,
      });
      expect(firstText(refused)).toMatch(
        /ringfence refused sandbox_create: persistent sandboxes are not allowed here: .*--sandbox-persistent/,
      );
      expect((await managedObjects(sessions.c)).containers).toEqual([]);
    } finally {
      await c.close();
    }
    await expect
      .poll(async () => (await managedObjects(sessions.b)).containers, { timeout: 15_000 })
      .toEqual([`ringfence-sandbox-${sessions.b}-second`]);
    const removedSecond = await ringfence(['sandbox', 'rm', 'second', '--json'], env());
    expect(JSON.parse(removedSecond.stdout).containers).toEqual([`ringfence-sandbox-${sessions.b}-second`]);
    expect(await managedObjects(sessions.b)).toEqual({ containers: [], networks: [] });
    expect((await managedObjects(sessions.a)).containers).toEqual([
      `ringfence-sandbox-${sessions.a}-lasting`,
    ]);
  });

  it('the person reads its logs with `ringfence sandbox logs` and removes it with `ringfence sandbox rm`', async () => {
    const logs = await ringfence(['sandbox', 'logs', 'lasting', '--tail', '5'], env());
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(new RegExp(`^sandbox lasting  session=${sessions.a}  running$`, 'm'));
    expect(logs.stdout).toContain('--- stdout\nmain started\n\\u{1B}[31mred');
    expect(logs.stdout).not.toContain('\u001b');
    expect(logs.stdout).toContain('--- stderr\nmain err');
    const asJson = await ringfence(
      ['sandbox', 'logs', 'lasting', '--session', sessions.a, '--tail', '3', '--json'],
      env(),
    );
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      name: 'lasting',
      stdout: 'main started\n\\u{1B}[31mred\n',
      stderr: 'main err\n',
    });
    const one = await ringfence(['sandbox', 'logs', 'lasting', '--tail', '1', '--json'], env());
    const oneLine = JSON.parse(one.stdout) as { stdout: string; stderr: string };
    expect(`${oneLine.stdout}${oneLine.stderr}`.split('\n').filter(Boolean)).toHaveLength(1);
    const unknown = await ringfence(['sandbox', 'logs', 'nothing-here'], env());
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no sandbox "nothing-here"\. See them with: ringfence sandbox ls/);
    const removed = await ringfence(['sandbox', 'rm', 'lasting'], env());
    expect(removed.code, removed.stderr).toBe(0);
    expect(await managedObjects(sessions.a)).toEqual({ containers: [], networks: [] });
  });
});
