import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextDigest, packContext } from './context.js';
import { parseLddOutput, planNodeBaseContext } from './node-base.js';

const LDD = `
	linux-vdso.so.1 (0x00007ffd6b7e5000)
	libdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f3abd78b000)
	libstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f3abd400000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3abd21e000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f3abd7a3000)
`;

describe('parseLddOutput', () => {
  it('lists every library and the loader, not the vDSO', () => {
    expect(parseLddOutput(LDD)).toEqual([
      '/lib/x86_64-linux-gnu/libdl.so.2',
      '/lib/x86_64-linux-gnu/libstdc++.so.6',
      '/lib/x86_64-linux-gnu/libc.so.6',
      '/lib64/ld-linux-x86-64.so.2',
    ]);
  });

  it('refuses a runtime with a missing library instead of building a broken image', () => {
    expect(() => parseLddOutput('\tlibssl.so.3 => not found\n')).toThrow(/libssl\.so\.3 => not found/);
  });

  it('handles a static binary', () => {
    expect(parseLddOutput('\tstatically linked\n')).toEqual([]);
  });
});

describe('planNodeBaseContext', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-base-'));
    for (const name of ['node', 'libc.so.6', 'ld.so', 'ca.crt'])
      await writeFile(join(dir, name), `content of ${name}`);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  // Host paths are mapped onto the temporary directory so the plan can be checked without a real runtime.
  const realpath = (path: string) =>
    join(dir, path.split('/').pop() === 'ld-linux-x86-64.so.2' ? 'ld.so' : path.split('/').pop()!);
  const inputs = () => ({
    nodePath: join(dir, 'node'),
    nodeVersion: '20.20.2',
    libraries: ['/lib/x86_64-linux-gnu/libc.so.6', '/lib64/ld-linux-x86-64.so.2'],
    caBundle: join(dir, 'ca.crt'),
    realpath,
  });

  it('holds exactly node, its libraries, a CA bundle, minimal /etc and /tmp — no shell', () => {
    const context = planNodeBaseContext(inputs());
    const files = context.files
      .filter((f) => !('directory' in f.source))
      .map((f) => f.path)
      .sort();
    expect(files).toEqual([
      'rootfs/etc/group',
      'rootfs/etc/nsswitch.conf',
      'rootfs/etc/passwd',
      'rootfs/etc/ssl/certs/ca-certificates.crt',
      'rootfs/lib/x86_64-linux-gnu/libc.so.6',
      'rootfs/lib64/ld-linux-x86-64.so.2',
      'rootfs/usr/local/bin/node',
    ]);
    expect(context.files.some((f) => /\/(sh|bash|busybox|apt|npm)$/.test(f.path))).toBe(false);
    const tmp = context.files.find((f) => f.path === 'rootfs/tmp/');
    expect(tmp?.mode).toBe(0o1777);
    expect(context.dockerfile.split('\n')[0]).toBe('FROM scratch');
    const node = context.files.find((f) => f.path === 'rootfs/usr/local/bin/node');
    expect(node).toMatchObject({ mode: 0o755, source: { hostPath: join(dir, 'node') } });
  });

  it('has no CA file when the host has none', () => {
    const { caBundle: _unused, ...withoutCa } = inputs();
    const context = planNodeBaseContext(withoutCa);
    expect(context.files.some((f) => f.path.includes('ca-certificates'))).toBe(false);
  });

  it('derives the same digest from the same inputs, and another when a byte changes', async () => {
    const first = await contextDigest(planNodeBaseContext(inputs()));
    const second = await contextDigest(planNodeBaseContext(inputs()));
    expect(first).toBe(second);
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
    await writeFile(join(dir, 'libc.so.6'), 'content of libc.so.6, patched');
    expect(await contextDigest(planNodeBaseContext(inputs()))).not.toBe(first);
  });

  it('packs the same tar bytes twice (fixed mtimes, sorted entries)', async () => {
    const read = async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of packContext(planNodeBaseContext(inputs())) as AsyncIterable<Buffer>)
        chunks.push(chunk);
      return Buffer.concat(chunks);
    };
    const [a, b] = [await read(), await read()];
    expect(a.length).toBeGreaterThan(0);
    expect(a.equals(b)).toBe(true);
  });
});
