import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServerStore } from '../config/servers.js';
import type { RegistrationPolicy } from './policy.js';
import { pullServer, pullSummary } from './pull.js';
import { registerServer, registrationSummary } from './register.js';

const ID = (n: number) => `sha256:${String(n).repeat(64)}`;

/** An engine that knows `images` (ref → Id) and whose registry pull of `pullable` yields `pulledId`. */
function fakeEngine(images: Map<string, string>, pull: { fails?: string; pulledId?: string } = {}) {
  const seen = { connects: 0, pulls: [] as string[] };
  const docker = {
    getImage: (ref: string) => ({
      inspect: async () => {
        const id = images.get(ref);
        if (!id) throw Object.assign(new Error(`no such image: ${ref}`), { statusCode: 404 });
        return { Id: id, RepoDigests: [], Config: { Labels: {} } };
      },
    }),
    pull: (ref: string, callback: (error: Error | null, stream?: unknown) => void) => {
      seen.pulls.push(ref);
      if (pull.fails) return callback(new Error(pull.fails));
      callback(null, {});
    },
    modem: {
      followProgress: (_stream: unknown, done: (error: Error | null) => void) => {
        for (const ref of seen.pulls) if (pull.pulledId) images.set(ref, pull.pulledId);
        done(null);
      },
    },
  } as unknown as Docker;
  return {
    seen,
    engine: async () => {
      seen.connects += 1;
      return docker;
    },
  };
}

const open: RegistrationPolicy = {
  defaultEgress: 'deny',
  imageRefusal: () => undefined,
  egressRefusal: () => undefined,
};

let dir: string;
let home: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-registration-'));
  home = join(dir, 'home');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const serversFile = () => readFile(join(home, 'mcp-servers.json'), 'utf8');

describe('registerServer', () => {
  it('records a contained server with its image ID, in the documented field order', async () => {
    const { engine } = fakeEngine(new Map([['img:1', ID(1)]]));
    const server = await registerServer(
      { name: 'docs', image: 'img:1', command: ['--stdio'], egressAllow: ['api.example.com'], env: ['A=1'] },
      { home, policy: open, engine, from: dir },
    );
    expect(Object.keys(server)).toEqual([
      'name',
      'transport',
      'image',
      'image_id',
      'command',
      'egress',
      'env',
    ]);
    expect(await new ServerStore(home).list()).toEqual([server]);
    expect(registrationSummary(server)).toBe(
      `Registered docs (image img:1, ${ID(1).slice(0, 19)}; egress only to api.example.com). Its tools are pinned the first time the gateway starts: ringfence mcp tools`,
    );
  });

  it('never asks the engine for a remote server', async () => {
    const { engine, seen } = fakeEngine(new Map());
    const server = await registerServer(
      { name: 'docs', url: 'https://mcp.example.com/mcp' },
      { home, policy: open, engine, from: dir },
    );
    expect(seen.connects).toBe(0);
    expect(registrationSummary(server)).toMatch(/^Registered docs \(remote mcp\.example\.com\)\. /);
  });

  it('refuses flags and egress entries before the engine is asked, and writes nothing', async () => {
    const { engine, seen } = fakeEngine(new Map([['img:1', ID(1)]]));
    const options = { home, policy: open, engine, from: dir };
    await expect(
      registerServer({ name: 'x', image: 'img:1', egressAllow: ['10.0.0.1'] }, options),
    ).rejects.toMatchObject({ code: 'SERVER_EGRESS' });
    await expect(
      registerServer(
        { name: 'x', npm: 'pkg@1.0.0', egressAllow: ['a.example'], egressAllowAddress: ['999.1.1.1/99'] },
        options,
      ),
    ).rejects.toMatchObject({ code: 'SERVER_EGRESS' });
    await expect(
      registerServer({ name: 'x', image: 'img:1', mounts: ['/etc'] }, options),
    ).rejects.toMatchObject({
      code: 'REGISTRATION_USAGE',
    });
    expect(seen.connects).toBe(0);
    await expect(serversFile()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses an image that is not on this host: it is never pulled', async () => {
    const { engine, seen } = fakeEngine(new Map());
    await expect(
      registerServer({ name: 'x', image: 'ghcr.io/a/b:1' }, { home, policy: open, engine, from: dir }),
    ).rejects.toMatchObject({
      code: 'REGISTRATION_IMAGE_MISSING',
      message:
        'The image ghcr.io/a/b:1 is not on this host; ringfence never pulls implicitly. Pull or build it first (docker pull ghcr.io/a/b:1), then add the server again.',
    });
    expect(seen.pulls).toEqual([]);
    await expect(serversFile()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("refuses what the organisation policy does not allow, with the policy's words, and writes nothing", async () => {
    const { engine } = fakeEngine(new Map([['img:1', ID(1)]]));
    const seenImages: string[][] = [];
    const strict: RegistrationPolicy = {
      defaultEgress: 'deny',
      imageRefusal: (image) => {
        seenImages.push([...(image.digests ?? [])]);
        return image.name === 'img:1' ? 'not this image' : undefined;
      },
      egressRefusal: (_server, egress) => (egress.mode === 'any' ? 'no open egress' : undefined),
    };
    await expect(
      registerServer(
        { name: 'x', image: 'img:1', egress: 'any' },
        { home, policy: strict, engine, from: dir },
      ),
    ).rejects.toMatchObject({ code: 'REGISTRATION_POLICY', message: 'not this image' });
    expect(seenImages).toEqual([[ID(1)]]);
    await expect(serversFile()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a name that is already registered, leaving the first entry as it was', async () => {
    const { engine } = fakeEngine(new Map([['img:1', ID(1)]]));
    const options = { home, policy: open, engine, from: dir };
    await registerServer({ name: 'x', image: 'img:1' }, options);
    const before = await serversFile();
    await expect(registerServer({ name: 'x', image: 'img:1', egress: 'any' }, options)).rejects.toMatchObject(
      {
        code: 'SERVER_EXISTS',
      },
    );
    expect(await serversFile()).toBe(before);
  });
});

describe('pullServer', () => {
  it('pulls a registry image and records its new ID', async () => {
    const images = new Map([['img:1', ID(1)]]);
    const { engine, seen } = fakeEngine(images, { pulledId: ID(2) });
    await registerServer({ name: 'x', image: 'img:1' }, { home, policy: open, engine, from: dir });
    const told: string[] = [];
    const result = await pullServer('x', {
      home,
      policy: open,
      engine,
      from: dir,
      onPull: (i) => told.push(i),
    });
    expect(told).toEqual(['img:1']);
    expect(seen.pulls).toEqual(['img:1']);
    expect((await new ServerStore(home).get('x')) as { image_id: string }).toMatchObject({ image_id: ID(2) });
    expect(pullSummary(result)).toBe(
      `x: recorded img:1 as ${ID(2).slice(0, 19)} (was ${ID(1).slice(0, 19)}). Its tools are compared with the pins at the next start.`,
    );
  });

  it('says so when the image did not change', async () => {
    const { engine } = fakeEngine(new Map([['img:1', ID(1)]]), { pulledId: ID(1) });
    await registerServer({ name: 'x', image: 'img:1' }, { home, policy: open, engine, from: dir });
    const result = await pullServer('x', { home, policy: open, engine, from: dir });
    expect(pullSummary(result)).toBe(`x: img:1 is unchanged (${ID(1).slice(0, 19)}).`);
  });

  it('refuses a remote server, a failed pull and an image the policy refuses, recording nothing', async () => {
    const images = new Map([['img:1', ID(1)]]);
    const options = { home, policy: open, from: dir };
    await registerServer(
      { name: 'r', url: 'https://mcp.example.com/mcp' },
      { ...options, engine: fakeEngine(images).engine },
    );
    await registerServer({ name: 'x', image: 'img:1' }, { ...options, engine: fakeEngine(images).engine });
    const before = await serversFile();
    await expect(pullServer('r', { ...options, engine: fakeEngine(images).engine })).rejects.toMatchObject({
      code: 'REGISTRATION_NOT_CONTAINED',
      message: 'r is a remote server; there is nothing to pull.',
    });
    await expect(
      pullServer('x', { ...options, engine: fakeEngine(images, { fails: 'registry unreachable' }).engine }),
    ).rejects.toMatchObject({
      code: 'REGISTRATION_PULL_FAILED',
      message: 'Pulling img:1 failed: registry unreachable',
    });
    const refusing: RegistrationPolicy = { ...open, imageRefusal: () => 'no longer allowed' };
    await expect(
      pullServer('x', {
        ...options,
        policy: refusing,
        engine: fakeEngine(images, { pulledId: ID(3) }).engine,
      }),
    ).rejects.toMatchObject({ code: 'REGISTRATION_POLICY', message: 'no longer allowed' });
    expect(await serversFile()).toBe(before);
  });
});
