import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createContainerRuntime } from './runtime.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('createContainerRuntime without an engine', () => {
  it("says only the engine's answer: the reaper, started beside the probe, fails too and is not reported", async () => {
    const home = await mkdtemp(join(tmpdir(), 'rf-runtime-'));
    dirs.push(home);
    const lines: string[] = [];
    const runtime = await createContainerRuntime({
      home,
      session: 'no-engine',
      log: (line) => lines.push(line),
      audit: { append: async () => ({}) } as never,
      workspaceRoots: [],
      env: { ...process.env, DOCKER_HOST: `unix://${join(home, 'no-engine.sock')}` },
    });
    expect(runtime.available).toBe(false);
    expect(runtime.available === false && runtime.reason).toMatch(/no-engine\.sock/);
    // Whatever the reaper did meanwhile, nothing about it reaches the person: the engine's answer
    // (with `ringfence doctor` where the start fails) is what says what to do.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lines).toEqual([]);
  });
});
