import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import {
  docker,
  expectAllCapabilitiesDropped,
  managedObjects,
  nodeBase,
  refusalFor,
  removeTestContainers,
  testLabels,
  testUlimits,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';

// node-base has node and nothing else (no shell, no sleep): its main process is node itself.
const KEEP_ALIVE = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];
// Where the engine cannot contain an egress allowlist (docs/runtimes.md), named hosts are refused.
const ALLOW_REFUSED = (await refusalFor('allow')) !== undefined;
const TOOLS = ['ringfence_status', 'sandbox_create', 'sandbox_list', 'sandbox_run', 'sandbox_delete'];

interface AuditLine {
  type: string;
  refs: Record<string, unknown>;
}

const json = (result: unknown) => JSON.parse(firstText(result)) as Record<string, unknown>;

describe("ringfence's own tools: sandboxes through a real client", () => {
  let home: string;
  let policyDir: string;
  let base: string;
  let served: ServedClient;
  /** The one --allow-mount directory (read-only), with a file in a folder below it. */
  let shared: string;
  /** Where mcp serve runs: contained servers may mount it, sandboxes may not. */
  let workdir: string;
  const session = uniqueName('sbx');
  const env = () => ({ RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir });
  const audit = async () =>
    (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditLine);
  const call = (name: string, args: Record<string, unknown>) =>
    served.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  // The person's own containers: one under the name a sandbox "victim" of this session would get,
  // one forging the sandbox label without ringfence's owner labels. Neither may be touched.
  const bystanders: string[] = [];

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    policyDir = await mkdtemp(join(dir, 'etc-'));
    base = await nodeBase();
    const org = await makeOrg(join(dir, 'org'));
    const policy = await signPolicy(
      org,
      policyDocument({
        default_egress: 'deny',
        // Sandboxes may name this host (never contacted), and nothing else.
        mcp: [{ server: 'ringfence', egress_allow: ['example.invalid'] }],
        rules: [
          {
            id: 'no-rm',
            match: { server: 'ringfence', tool: 'sandbox_run' },
            when: [{ arg: '/command/0', equals: 'rm' }],
            action: 'deny',
            reason: 'no rm in sandboxes',
          },
        ],
      }),
      'sandbox-policy',
    );
    await install(policy, org, env());
    for (const [name, labels] of [
      [`ringfence-sandbox-${session}-victim`, testLabels()],
      [
        uniqueName('rf-forged'),
        { ...testLabels(), 'ringfence.sandbox': 'victim', 'ringfence.role': 'sandbox' },
      ],
    ] as const) {
      const container = await docker.createContainer({
        name,
        Image: base,
        Cmd: KEEP_ALIVE,
        Labels: labels,
        User: '65532:65532',
        HostConfig: { NetworkMode: 'none', ReadonlyRootfs: true, CapDrop: ['ALL'], Ulimits: testUlimits() },
      });
      await container.start();
      bystanders.push(name);
    }
    shared = await mkdtemp(join(dir, 'shared-'));
    await mkdir(join(shared, 'docs'), { mode: 0o755 });
    await writeFile(join(shared, 'docs', 'readme.txt'), 'shared text', { mode: 0o644 });
    await chmod(shared, 0o755);
    workdir = await mkdtemp(join(dir, 'cwd-'));
    await mkdir(join(workdir, 'src'));
    served = await connectStdio(
      home,
      env(),
      {},
      {
        cwd: workdir,
        args: ['--session', session, '--sandbox-tools', '--sandbox-image', base, '--allow-mount', shared],
      },
    );
  });

  afterAll(async () => {
    await served?.close();
    await removeTestContainers();
  });

  it('lists its tools, each saying what it touches', async () => {
    const { tools } = await served.client.listTools();
    const own = tools.filter((t) => TOOLS.includes(t.name));
    expect(own.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of own) expect(tool.description).toMatch(/Touches/);
    const status = json(await call('ringfence_status', {}));
    expect(status.images).toEqual([base]);
    expect(status.engine).toMatchObject({ session });
  });

  it('refuses egress "any" where the policy grants no network, creating nothing', async () => {
    const refused = await call('sandbox_create', {
      name: 'open',
      image: base,
      egress: 'any',
      command: KEEP_ALIVE,
    });
    expect(refused.isError).toBe(true);
    expect(firstText(refused)).toMatch(/ringfence refused sandbox_create: .*policy/);
    expect((await managedObjects(session)).containers).toEqual([]);
  });

  it('refuses an image the person did not allow', async () => {
    const refused = await call('sandbox_create', { name: 'other', image: 'alpine:3', command: KEEP_ALIVE });
    expect(firstText(refused)).toMatch(/not one the person allowed/);
  });

  it('creates a hardened sandbox with no network; a command writes a file and another reads it', async () => {
    const created = json(await call('sandbox_create', { name: 'work', image: base, command: KEEP_ALIVE }));
    expect(created.created).toMatchObject({ name: 'work', state: 'running', network: 'none' });
    const info = await docker.getContainer(`ringfence-sandbox-${session}-work`).inspect();
    expect(info.Config.User).toBe('65532:65532');
    expect(info.Config.Labels).toMatchObject({ 'ringfence.sandbox': 'work', 'ringfence.session': session });
    expect(info.HostConfig).toMatchObject({
      NetworkMode: 'none',
      ReadonlyRootfs: false,
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
    });
    expect(info.HostConfig.Memory).toBeGreaterThan(0);
    expect(info.HostConfig.PidsLimit).toBeGreaterThan(0);
    await expectAllCapabilitiesDropped(info.HostConfig);
    expect(JSON.stringify(info.Mounts)).not.toMatch(/\.sock/);

    const wrote = json(
      await call('sandbox_run', {
        name: 'work',
        command: ['node', '-e', "require('fs').writeFileSync('/tmp/note.txt', 'hello from the sandbox')"],
      }),
    );
    expect(wrote.exit_code).toBe(0);
    const read = json(
      await call('sandbox_run', {
        name: 'work',
        command: ['node', '-e', "process.stdout.write(require('fs').readFileSync('/tmp/note.txt'))"],
      }),
    );
    expect(read).toMatchObject({ exit_code: 0, stdout: 'hello from the sandbox' });
    const who = json(
      await call('sandbox_run', { name: 'work', command: ['node', '-e', 'console.log(process.getuid())'] }),
    );
    expect(who.stdout).toBe('65532\n');
    const listed = json(await call('sandbox_list', {}));
    expect(listed.sandboxes).toEqual([expect.objectContaining({ name: 'work', image: base })]);
    // The person sees it too.
    const ls = await ringfence(['sandbox', 'ls', '--json'], env());
    expect(JSON.parse(ls.stdout).sandboxes).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'work', session })]),
    );
  });

  it('stops a command at its output cap and at its timeout, and the sandbox goes on working', async () => {
    const capped = await call('sandbox_run', {
      name: 'work',
      command: ['node', '-e', "for (;;) process.stdout.write('x'.repeat(4096))"],
      max_output_bytes: 1000,
    });
    expect(capped.isError).toBe(true);
    const cappedOut = JSON.parse(firstText(capped));
    expect(cappedOut.stdout).toBe('x'.repeat(1000));
    expect(cappedOut.stopped).toMatch(/max_output_bytes/);
    expect(cappedOut.exit_code).toBeNull();

    const progress: number[] = [];
    const started = Date.now();
    const slow = await served.client.callTool(
      {
        name: 'sandbox_run',
        arguments: {
          name: 'work',
          command: ['node', '-e', 'setTimeout(() => {}, 120000)'],
          timeout_seconds: 3,
        },
      },
      undefined,
      { timeout: 120_000, onprogress: (p) => progress.push(p.progress) },
    );
    const elapsed = Date.now() - started;
    expect(slow.isError).toBe(true);
    expect(JSON.parse(firstText(slow)).stopped).toMatch(/timeout_seconds/);
    expect(elapsed).toBeGreaterThanOrEqual(3000);
    expect(elapsed).toBeLessThan(30_000);
    expect(progress.length).toBeGreaterThanOrEqual(1);

    const after = json(
      await call('sandbox_run', { name: 'work', command: ['node', '-e', 'console.log("still here")'] }),
    );
    expect(after).toMatchObject({ exit_code: 0, stdout: 'still here\n' });
  });

  it('a policy rule denying a command pattern refuses it before it runs, and audits the decision', async () => {
    const denied = await call('sandbox_run', { name: 'work', command: ['rm', '-rf', '/tmp'] });
    expect(denied.isError).toBe(true);
    expect(firstText(denied)).toMatch(/no rm in sandboxes \(policy rule "no-rm"\)/);
    const decisions = (await audit()).filter(
      (e) => e.type === 'mcp.decision' && e.refs.phase === 'call' && e.refs.server === 'ringfence',
    );
    expect(decisions.find((d) => d.refs.rule === 'no-rm')?.refs).toMatchObject({
      tool: 'sandbox_run',
      allowed: false,
    });
    // Allowed calls are decided and their results audited like any server's.
    expect(decisions.some((d) => d.refs.tool === 'sandbox_create' && d.refs.allowed === true)).toBe(true);
    expect((await audit()).some((e) => e.type === 'mcp.result' && e.refs.server === 'ringfence')).toBe(true);
  });

  it("acts only on its own sandboxes: a guessed name and a forged label are someone else's", async () => {
    for (const tool of ['sandbox_delete', 'sandbox_run']) {
      const refused = await call(
        tool,
        tool === 'sandbox_run' ? { name: 'victim', command: ['true'] } : { name: 'victim' },
      );
      expect(firstText(refused)).toMatch(/there is no sandbox "victim" in this session/);
    }
    // Creating one under the name the person's container already has fails, and cleans up only its own.
    const clash = await call('sandbox_create', { name: 'victim', image: base, command: KEEP_ALIVE });
    expect(clash.isError).toBe(true);
    for (const name of bystanders)
      expect((await docker.getContainer(name).inspect()).State.Running).toBe(true);
  });

  it('mounts only from --allow-mount, read-only as it says; the working directory is not offered', async () => {
    for (const path of [join(workdir, 'src'), '/etc', join(home, '..')]) {
      const refused = await call('sandbox_create', {
        name: 'm',
        image: base,
        command: KEEP_ALIVE,
        mounts: [{ path }],
      });
      expect(refused.isError).toBe(true);
      expect(firstText(refused)).toMatch(/ringfence refused sandbox_create/);
    }
    const asked = json(
      await call('sandbox_create', {
        name: 'm',
        image: base,
        command: KEEP_ALIVE,
        mounts: [{ path: join(shared, 'docs'), mode: 'rw' }],
      }),
    );
    expect(asked.created).toMatchObject({ name: 'm' });
    const read = json(
      await call('sandbox_run', {
        name: 'm',
        command: [
          'node',
          '-e',
          "process.stdout.write(require('fs').readFileSync('/workspace/docs/readme.txt'))",
        ],
      }),
    );
    expect(read.stdout).toBe('shared text');
    // rw asked, but the root allows reading only: the write is refused from inside.
    const write = json(
      await call('sandbox_run', {
        name: 'm',
        command: ['node', '-e', "require('fs').writeFileSync('/workspace/docs/new.txt', 'x')"],
      }),
    );
    expect(write.exit_code).not.toBe(0);
    expect(write.stderr).toMatch(/EROFS|EACCES/);
    // The person removes it from the terminal.
    const removed = await ringfence(['sandbox', 'rm', 'm', '--session', session, '--json'], env());
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout).containers).toEqual([`ringfence-sandbox-${session}-m`]);
    const gone = await call('sandbox_run', { name: 'm', command: ['true'] });
    expect(firstText(gone)).toMatch(/no sandbox "m"/);
  });

  it('two creates of one name at once: one sandbox, and the refused one removes nothing of it', async () => {
    const both = await Promise.all([
      call('sandbox_create', { name: 'twin', image: base, command: KEEP_ALIVE }),
      call('sandbox_create', { name: 'twin', image: base, command: KEEP_ALIVE }),
    ]);
    expect(both.filter((r) => r.isError)).toHaveLength(1);
    expect(firstText(both.find((r) => r.isError))).toMatch(/"twin" (is being created|already exists)/);
    const ran = json(await call('sandbox_run', { name: 'twin', command: ['node', '-e', 'console.log(1)'] }));
    expect(ran.exit_code).toBe(0);
    json(await call('sandbox_delete', { name: 'twin' }));
  });

  it.skipIf(ALLOW_REFUSED)(
    'named hosts: the egress sidecar and an internal network, all labelled with the sandbox, and delete removes them',
    async () => {
      // No traffic is sent: the objects are checked, nothing is fetched.
      const beyond = await call('sandbox_create', {
        name: 'far',
        image: base,
        hosts: ['other.invalid'],
        command: KEEP_ALIVE,
      });
      expect(firstText(beyond)).toMatch(/ringfence refused sandbox_create: .*other\.invalid/);
      const created = json(
        await call('sandbox_create', {
          name: 'net',
          image: base,
          hosts: ['example.invalid'],
          command: KEEP_ALIVE,
        }),
      );
      expect(created.created).toMatchObject({ name: 'net', network: 'hosts' });
      const networks = await docker.listNetworks({
        filters: { label: ['ringfence.sandbox=net', `ringfence.session=${session}`] },
      });
      expect(networks).toHaveLength(2);
      const inner = networks.find((n) => n.Internal);
      expect(inner).toBeDefined();
      const info = await docker.getContainer(`ringfence-sandbox-${session}-net`).inspect();
      expect(info.HostConfig.NetworkMode).toBe(inner!.Name);
      expect(info.Config.Env).toEqual(
        expect.arrayContaining([expect.stringMatching(/^HTTPS_PROXY=http:\/\//)]),
      );
      const sidecars = await docker.listContainers({
        all: true,
        filters: {
          label: ['ringfence.sandbox=net', 'ringfence.role=sidecar', `ringfence.session=${session}`],
        },
      });
      expect(sidecars).toHaveLength(1);
      json(await call('sandbox_delete', { name: 'net' }));
      expect(
        await docker.listNetworks({
          filters: { label: ['ringfence.sandbox=net', `ringfence.session=${session}`] },
        }),
      ).toEqual([]);
      expect(
        await docker.listContainers({
          all: true,
          filters: { label: ['ringfence.sandbox=net', `ringfence.session=${session}`] },
        }),
      ).toEqual([]);
    },
  );

  it('delete leaves no container and no network of the sandbox, and nothing else is touched', async () => {
    const deleted = json(await call('sandbox_delete', { name: 'work' }));
    expect(deleted.deleted).toMatchObject({ containers: [`ringfence-sandbox-${session}-work`] });
    const left = await managedObjects(session);
    expect(left.containers).toEqual([]);
    expect(left.networks).toEqual([]);
    const again = await call('sandbox_delete', { name: 'work' });
    expect(firstText(again)).toMatch(/no sandbox "work"/);
    for (const name of bystanders)
      expect((await docker.getContainer(name).inspect()).State.Running).toBe(true);
  });

  it('a sandbox left when the client goes goes with its gateway (none outlives it)', async () => {
    json(await call('sandbox_create', { name: 'left', image: base, command: KEEP_ALIVE }));
    expect((await managedObjects(session)).containers).toEqual([`ringfence-sandbox-${session}-left`]);
    await served.close();
    const deadline = Date.now() + 30_000;
    while ((await managedObjects(session)).containers.length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await managedObjects(session)).toEqual({ containers: [], networks: [] });
    for (const name of bystanders)
      expect((await docker.getContainer(name).inspect()).State.Running).toBe(true);
  });
});
