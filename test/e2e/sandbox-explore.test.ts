import { access, chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  docker,
  managedObjects,
  nodeBase,
  refusalFor,
  removeTestContainers,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';

// node-base has node and nothing else (no shell, no tar): every file is seen and written through
// the engine's archive API, and the test makes its fixtures with node.
const KEEP_ALIVE = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];
// Where the engine cannot contain an egress allowlist (docs/runtimes.md), named hosts are refused.
const ALLOW_REFUSED = (await refusalFor('allow')) !== undefined;
const TOOLS = ['sandbox_fork', 'sandbox_explore', 'sandbox_read_file', 'sandbox_write_file'];

// biome-ignore lint/suspicious/noExplicitAny: tool results are read as loose JSON, their shape asserted.
const json = (result: unknown) => JSON.parse(firstText(result)) as Record<string, any>;

describe("ringfence's own tools: copy and explore sandboxes through a real client", () => {
  let home: string;
  let policyDir: string;
  let base: string;
  let served: ServedClient;
  /** The one --allow-mount directory (read-only), with a folder below it that sandboxes mount. */
  let shared: string;
  const session = uniqueName('sbx-explore');
  const env = () => ({ RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir });
  const call = (name: string, args: Record<string, unknown>) =>
    served.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const node = async (sandbox: string, script: string) => {
    const ran = json(await call('sandbox_run', { name: sandbox, command: ['node', '-e', script] }));
    expect(ran.exit_code, ran.stderr).toBe(0);
    return ran.stdout as string;
  };
  const images = async (label: string) =>
    (await docker.listImages({ filters: { label: [label, `ringfence.session=${session}`] } })).flatMap(
      (i) => i.RepoTags ?? [i.Id],
    );

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    policyDir = await mkdtemp(join(dir, 'etc-'));
    base = await nodeBase();
    const org = await makeOrg(join(dir, 'org'));
    const policy = await signPolicy(
      org,
      // Sandboxes may name this host (never contacted), and nothing else.
      policyDocument({
        default_egress: 'deny',
        mcp: [{ server: 'ringfence', egress_allow: ['example.invalid'] }],
      }),
      'sandbox-explore-policy',
    );
    await install(policy, org, env());
    shared = await mkdtemp(join(dir, 'shared-'));
    await mkdir(join(shared, 'docs'), { mode: 0o755 });
    await writeFile(join(shared, 'docs', 'readme.txt'), 'shared text', { mode: 0o644 });
    // The person's private file in the shared folder: the sandbox's user (65532) may not read it.
    await writeFile(join(shared, 'docs', 'private.txt'), 'the person only', { mode: 0o600 });
    await chmod(shared, 0o755);
    served = await connectStdio(
      home,
      env(),
      {},
      { args: ['--session', session, '--sandbox-tools', '--sandbox-image', base, '--allow-mount', shared] },
    );
    const created = json(
      await call('sandbox_create', {
        name: 'src',
        image: base,
        command: KEEP_ALIVE,
        mounts: [{ path: join(shared, 'docs') }],
      }),
    );
    expect(created.created).toMatchObject({ name: 'src', state: 'running', network: 'none' });
  });

  afterAll(async () => {
    await served?.close();
    await removeTestContainers();
  });

  it('lists the copy-and-explore tools, each saying what it touches', async () => {
    const { tools } = await served.client.listTools();
    const own = tools.filter((t) => TOOLS.includes(t.name));
    expect(own.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of own) expect(tool.description).toMatch(/Touches/);
  });

  it('writes a file, the tree shows it, it reads back; owned by the sandbox user; binary as base64', async () => {
    // node-base lets its user write only in /tmp, a tmpfs the archive API does not see: refused, said why.
    const tmpfs = await call('sandbox_write_file', { name: 'src', path: '/tmp/x.txt', content: 'x' });
    expect(firstText(tmpfs)).toMatch(
      /ringfence refused sandbox_write_file: \/tmp\/x.txt is in \/tmp, a tmpfs/,
    );
    expect(firstText(await call('sandbox_read_file', { name: 'src', path: '/tmp/x.txt' }))).toMatch(
      /a tmpfs/,
    );
    const wrote = json(
      await call('sandbox_write_file', {
        name: 'src',
        path: '/work/hello.txt',
        content: 'hello, sandbox',
        mode: 0o640,
      }),
    );
    expect(wrote.written).toEqual({
      path: '/work/hello.txt',
      bytes: 14,
      mode: '0640',
      owner: '65532:65532',
      made_directories: ['/work'],
    });
    const tree = json(await call('sandbox_explore', { name: 'src', path: '/work', depth: 1 }));
    expect(tree.entries).toEqual([{ path: '/work/hello.txt', type: 'file', size: 14, mode: '0640' }]);
    const root = json(await call('sandbox_explore', { name: 'src', path: '/', depth: 1 }));
    expect((root.entries as { path: string }[]).map((e) => e.path)).toEqual(
      expect.arrayContaining(['/work', '/etc', '/tmp']),
    );
    expect(root.not_shown).toMatch(/\/tmp: a tmpfs/);
    const read = json(await call('sandbox_read_file', { name: 'src', path: '/work/hello.txt' }));
    expect(read).toMatchObject({ encoding: 'utf8', content: 'hello, sandbox', size: 14, more: false });
    const part = json(
      await call('sandbox_read_file', { name: 'src', path: '/work/hello.txt', offset: 7, max_bytes: 3 }),
    );
    expect(part).toMatchObject({ content: 'san', bytes_returned: 3, more: true });
    // The sandbox's own view: its user owns it, with the mode asked for.
    expect(
      await node(
        'src',
        "const s=require('fs').statSync('/work/hello.txt');process.stdout.write(s.uid+':'+s.gid+' '+(s.mode&0o777).toString(8))",
      ),
    ).toBe('65532:65532 640');
    const bytes = Buffer.from([0, 0xff, 0x10, 0x80]).toString('base64');
    json(
      await call('sandbox_write_file', {
        name: 'src',
        path: '/work/bin',
        content: bytes,
        encoding: 'base64',
      }),
    );
    expect(json(await call('sandbox_read_file', { name: 'src', path: '/work/bin' }))).toMatchObject({
      encoding: 'base64',
      content: bytes,
    });
  });

  it('explore caps depth and entries, and shows hostile names escaped', async () => {
    await node(
      'src',
      `const fs=require('fs');fs.mkdirSync('/work/many/a/b/c/d',{recursive:true});
       for(let i=0;i<300;i++)fs.writeFileSync('/work/many/f'+i,'x');
       fs.writeFileSync('/work/many/evil\\u001b[31m\\nname','');
       fs.writeFileSync(Buffer.from([0x2f,0x77,0x6f,0x72,0x6b,0x2f,0x6d,0x61,0x6e,0x79,0x2f,0x61,0xff,0x62]),'');`,
    );
    const capped = json(
      await call('sandbox_explore', { name: 'src', path: '/work/many', depth: 1, max_entries: 50 }),
    );
    expect(capped.entries).toHaveLength(50);
    expect(capped.truncated).toMatch(/max_entries reached/);
    const all = json(
      await call('sandbox_explore', { name: 'src', path: '/work/many', depth: 2, max_entries: 5000 }),
    );
    expect(all.truncated).toBeUndefined();
    const paths = (all.entries as { path: string }[]).map((e) => e.path);
    expect(paths).toContain('/work/many/a/b');
    expect(paths).not.toContain('/work/many/a/b/c');
    expect(paths).toContain('/work/many/evil\\u{1B}[31m\\u{A}name');
    expect(all.entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '/work/many/a\\u{DCFF}b', name_not_utf8: true }),
      ]),
    );
    expect(JSON.stringify(all)).not.toMatch(/\u001b/);
  });

  it('a link to a file outside what was asked for is reported, never followed', async () => {
    await node(
      'src',
      "const fs=require('fs');fs.writeFileSync('/work/secret','top secret');fs.symlinkSync('/work/secret','/work/shadow-link');fs.symlinkSync('/etc/shadow','/work/etc-shadow')",
    );
    for (const [path, target] of [
      ['/work/shadow-link', '/work/secret'],
      ['/work/etc-shadow', '/etc/shadow'],
    ]) {
      const read = json(await call('sandbox_read_file', { name: 'src', path }));
      expect(read).toMatchObject({
        type: 'symlink',
        link_target: target,
        note: expect.stringMatching(/not followed/),
      });
      expect(read.content).toBeUndefined();
      const explored = json(await call('sandbox_explore', { name: 'src', path }));
      expect(explored).toMatchObject({ type: 'symlink', link_target: target, entries: [] });
    }
    expect(
      JSON.stringify(json(await call('sandbox_read_file', { name: 'src', path: '/work/shadow-link' }))),
    ).not.toMatch(/top secret/);
    const refused = await call('sandbox_read_file', { name: 'src', path: '/work/../etc/passwd' });
    expect(refused.isError).toBe(true);
  });

  it("reads only what the sandbox's user may read, although the engine reads as root", async () => {
    const denied = json(
      await call('sandbox_run', {
        name: 'src',
        command: ['node', '-e', "require('fs').readFileSync('/workspace/docs/private.txt')"],
      }),
    );
    expect(denied.stderr).toMatch(/EACCES/);
    const read = json(await call('sandbox_read_file', { name: 'src', path: '/workspace/docs/private.txt' }));
    expect(read).toMatchObject({
      type: 'file',
      mode: '0600',
      note: expect.stringMatching(/may not read it/),
    });
    expect(JSON.stringify(read)).not.toMatch(/the person only/);
  });

  it('a write into a read-only mount is refused, directly or through a link in the sandbox', async () => {
    const direct = await call('sandbox_write_file', {
      name: 'src',
      path: '/workspace/docs/new.txt',
      content: 'x',
    });
    expect(direct.isError).toBe(true);
    expect(firstText(direct)).toMatch(/mounted read-only/);
    await node('src', "require('fs').symlinkSync('/workspace/docs','/work/docs-link')");
    const linked = await call('sandbox_write_file', {
      name: 'src',
      path: '/work/docs-link/new.txt',
      content: 'x',
    });
    expect(linked.isError).toBe(true);
    expect(firstText(linked)).toMatch(/ringfence refused sandbox_write_file: .*read-only/);
    await expect(access(join(shared, 'docs', 'new.txt'))).rejects.toThrow();
    // What is mounted reads fine.
    expect(
      json(await call('sandbox_read_file', { name: 'src', path: '/workspace/docs/readme.txt' })),
    ).toMatchObject({
      content: 'shared text',
    });
  });

  it('fork: the copy has the files and the containment; a change in it is not in the source', async () => {
    const forked = json(await call('sandbox_fork', { name: 'src', new_name: 'copy' }));
    expect(forked).toMatchObject({
      from: 'src',
      forked: { name: 'copy', state: 'running', network: 'none' },
    });
    expect(forked.image.reference).toMatch(/^ringfence-sandbox-fork:copy-/);
    expect(forked.image.size_bytes).toBeGreaterThan(0);
    expect(json(await call('sandbox_read_file', { name: 'copy', path: '/work/hello.txt' })).content).toBe(
      'hello, sandbox',
    );
    json(
      await call('sandbox_write_file', {
        name: 'copy',
        path: '/work/hello.txt',
        content: 'changed in the copy',
      }),
    );
    json(await call('sandbox_write_file', { name: 'copy', path: '/work/only-copy.txt', content: 'new' }));
    expect(json(await call('sandbox_read_file', { name: 'src', path: '/work/hello.txt' })).content).toBe(
      'hello, sandbox',
    );
    const absent = await call('sandbox_read_file', { name: 'src', path: '/work/only-copy.txt' });
    expect(firstText(absent)).toMatch(/there is no \/work\/only-copy.txt in the sandbox/);
    // Same containment: no network, hardened, the same read-only mount.
    const info = await docker.getContainer(`ringfence-sandbox-${session}-copy`).inspect();
    expect(info.HostConfig).toMatchObject({
      NetworkMode: 'none',
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
    });
    expect(info.Config.User).toBe('65532:65532');
    expect(info.Mounts.map((m) => [m.Destination, m.RW])).toEqual([['/workspace/docs', false]]);
    expect(await node('copy', "console.log(Object.keys(require('os').networkInterfaces()).join(','))")).toBe(
      'lo\n',
    );
    expect(await images('ringfence.role=fork-image')).toEqual([forked.image.reference]);
    expect((await docker.getImage(forked.image.reference).inspect()).Config.Labels).toMatchObject({
      'ringfence.sandbox': 'copy',
      'ringfence.role': 'fork-image',
      'ringfence.sandbox_fork_of': 'src',
    });
  });

  it.skipIf(ALLOW_REFUSED)(
    'fork of a sandbox with named hosts: the same hosts through its own sidecar and networks, all gone with it',
    async () => {
      // No traffic is sent: the objects are checked, nothing is fetched.
      json(
        await call('sandbox_create', {
          name: 'net',
          image: base,
          hosts: ['example.invalid'],
          command: KEEP_ALIVE,
        }),
      );
      json(await call('sandbox_write_file', { name: 'net', path: '/work/n.txt', content: 'networked' }));
      const forked = json(await call('sandbox_fork', { name: 'net', new_name: 'netcopy' }));
      expect(forked.forked).toMatchObject({ name: 'netcopy', network: 'hosts' });
      expect(json(await call('sandbox_read_file', { name: 'netcopy', path: '/work/n.txt' })).content).toBe(
        'networked',
      );
      const networks = await docker.listNetworks({ filters: { label: ['ringfence.sandbox=netcopy'] } });
      expect(networks).toHaveLength(2);
      const inner = networks.find((n) => n.Internal)!;
      const info = await docker.getContainer(`ringfence-sandbox-${session}-netcopy`).inspect();
      expect(info.HostConfig.NetworkMode).toBe(inner.Name);
      const sidecars = await docker.listContainers({
        all: true,
        filters: { label: ['ringfence.sandbox=netcopy', 'ringfence.role=sidecar'] },
      });
      expect(sidecars).toHaveLength(1);
      // Its proxy is its own sidecar, on its own network, not the source's.
      const proxy = info.Config.Env.find((e) => e.startsWith('HTTPS_PROXY='))!;
      const sidecarAddress = (await docker.getContainer(sidecars[0]!.Id).inspect()).NetworkSettings.Networks[
        inner.Name
      ]!.IPAddress;
      expect(proxy).toContain(sidecarAddress);
      json(await call('sandbox_delete', { name: 'netcopy' }));
      json(await call('sandbox_delete', { name: 'net' }));
      for (const name of ['net', 'netcopy']) {
        expect(await docker.listNetworks({ filters: { label: [`ringfence.sandbox=${name}`] } })).toEqual([]);
        expect(
          await docker.listContainers({ all: true, filters: { label: [`ringfence.sandbox=${name}`] } }),
        ).toEqual([]);
        expect(await images(`ringfence.sandbox=${name}`)).toEqual([]);
      }
    },
  );

  it('fork refuses an unknown source and a taken name, leaving no image', async () => {
    expect(firstText(await call('sandbox_fork', { name: 'nope', new_name: 'other' }))).toMatch(
      /there is no sandbox "nope"/,
    );
    expect(firstText(await call('sandbox_fork', { name: 'src', new_name: 'copy' }))).toMatch(
      /"copy" already exists/,
    );
    expect(await images('ringfence.role=fork-image')).toHaveLength(1);
  });

  it('a stopped sandbox is explored, read and written all the same (nothing runs in it)', async () => {
    await docker.getContainer(`ringfence-sandbox-${session}-copy`).stop({ t: 0 });
    json(await call('sandbox_write_file', { name: 'copy', path: '/work/while-stopped', content: 'still' }));
    expect(json(await call('sandbox_read_file', { name: 'copy', path: '/work/while-stopped' })).content).toBe(
      'still',
    );
    const tree = json(await call('sandbox_explore', { name: 'copy', path: '/work', depth: 1 }));
    expect((tree.entries as { path: string }[]).map((e) => e.path)).toContain('/work/only-copy.txt');
  });

  it('deleting the fork leaves no container, image or network of it; the source is untouched', async () => {
    const deleted = json(await call('sandbox_delete', { name: 'copy' }));
    expect(deleted.deleted.containers).toEqual([`ringfence-sandbox-${session}-copy`]);
    expect(deleted.deleted.images).toEqual([expect.stringMatching(/^ringfence-sandbox-fork:copy-/)]);
    expect(await images('ringfence.sandbox=copy')).toEqual([]);
    expect(await docker.listNetworks({ filters: { label: ['ringfence.sandbox=copy'] } })).toEqual([]);
    expect((await managedObjects(session)).containers).toEqual([`ringfence-sandbox-${session}-src`]);
    expect(json(await call('sandbox_read_file', { name: 'src', path: '/work/hello.txt' })).content).toBe(
      'hello, sandbox',
    );
  });

  it("a fork's image left when the gateway ends goes with it", async () => {
    json(await call('sandbox_fork', { name: 'src', new_name: 'left' }));
    expect(await images('ringfence.sandbox=left')).toHaveLength(1);
    await served.close();
    const deadline = Date.now() + 30_000;
    while ((await images('ringfence.managed=1')).length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await images('ringfence.managed=1')).toEqual([]);
    expect(await managedObjects(session)).toEqual({ containers: [], networks: [] });
  });
});
