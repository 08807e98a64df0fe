import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { connectStdio, firstText, freshHome, type ServedClient, startEverything } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';

/** A real third-party server (server-everything, streamable HTTP on loopback) behind the gateway. */
describe('remote server through ringfence mcp serve (stdio, real SDK client)', () => {
  let home: string;
  let everything: Awaited<ReturnType<typeof startEverything>>;
  let served: ServedClient;

  beforeAll(async () => {
    home = await freshHome();
    everything = await startEverything();
    const added = await ringfence(['mcp', 'add', 'every', '--url', everything.url], { RINGFENCE_HOME: home });
    expect(added.code, added.stderr).toBe(0);
    served = await connectStdio(home);
  });
  afterAll(async () => {
    await served?.close();
    await stopAll();
  });

  it('lists the tools prefixed, with our description prefix and untrusted hints overridden', async () => {
    const { tools } = await served.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('every_echo');
    expect(names).toContain('every_get-structured-content');
    // Sampling tools appear only for clients that declare sampling: the gateway declares nothing.
    expect(names.some((n) => n.includes('sampling'))).toBe(false);
    for (const tool of tools) {
      expect(tool.name.startsWith('every_')).toBe(true);
      expect(
        tool.description?.startsWith(`[every via ringfence remote ${new URL(everything.url).host}] `),
      ).toBe(true);
      expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    }
    expect(served.stderr()).toContain('first sight of every');
  });

  it('calls a tool and returns its result', async () => {
    const result = await served.client.callTool({
      name: 'every_echo',
      arguments: { message: 'hello through the fence' },
    });
    expect(result.isError).toBeFalsy();
    expect(firstText(result)).toContain('hello through the fence');
  });

  it("serves the real server's prompts and completes their arguments, names mapped both ways", async () => {
    const { prompts } = await served.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining(['every_simple-prompt', 'every_args-prompt', 'every_completable-prompt']),
    );
    const got = await served.client.getPrompt({ name: 'every_args-prompt', arguments: { city: 'Paris' } });
    expect(got.messages).toEqual([
      { role: 'user', content: { type: 'text', text: "What's weather in Paris?" } },
    ]);
    const department = await served.client.complete({
      ref: { type: 'ref/prompt', name: 'every_completable-prompt' },
      argument: { name: 'department', value: 'Eng' },
    });
    expect(department.completion.values).toEqual(['Engineering']);
    const lead = await served.client.complete({
      ref: { type: 'ref/prompt', name: 'every_completable-prompt' },
      argument: { name: 'name', value: 'A' },
      context: { arguments: { department: 'Engineering' } },
    });
    expect(lead.completion.values).toEqual(['Alice']);
  });

  it('passes valid structured content that matches the pinned output schema', async () => {
    const result = await served.client.callTool({
      name: 'every_get-structured-content',
      arguments: { location: 'Chicago' },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
    });
  });

  it('refuses arguments the pinned schema refuses, without forwarding', async () => {
    const wrongType = await served.client.callTool({ name: 'every_echo', arguments: { message: 42 } });
    expect(wrongType.isError).toBe(true);
    expect(firstText(wrongType)).toMatch(/do not match the tool's pinned input schema/);
    const unknown = await served.client.callTool({
      name: 'every_echo',
      arguments: { message: 'x', exfil: 'y' },
    });
    expect(unknown.isError).toBe(true);
    expect(firstText(unknown)).toMatch(/pinned input schema/);
  });

  it('refuses a tool name it never listed', async () => {
    await expect(served.client.callTool({ name: 'every_not-a-tool', arguments: {} })).rejects.toThrow(
      /not a tool this gateway listed/,
    );
    await expect(served.client.callTool({ name: 'echo', arguments: { message: 'x' } })).rejects.toThrow(
      /not a tool this gateway listed/,
    );
  });

  it('writes decisions before results, by digest only, and the chain verifies', async () => {
    const log = await readFile(join(home, 'audit.jsonl'), 'utf8');
    expect(log).not.toContain('hello through the fence');
    const entries = log
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            seq: number;
            type: string;
            parent_seq?: number;
            refs: Record<string, unknown>;
          },
      );
    const call = entries.find(
      (e) =>
        e.type === 'mcp.decision' &&
        e.refs.phase === 'call' &&
        e.refs.tool === 'echo' &&
        e.refs.allowed === true,
    );
    expect(call?.refs.arguments).toMatch(/^sha256:[0-9a-f]{64}$/);
    const result = entries.find((e) => e.type === 'mcp.result' && e.parent_seq === call?.seq);
    expect(result?.seq).toBeGreaterThan(call!.seq);
    const refused = entries.filter((e) => e.type === 'mcp.decision' && e.refs.rule === 'input-schema');
    expect(refused.length).toBeGreaterThanOrEqual(2);
    const verify = await ringfence(['audit', 'verify', '--json'], { RINGFENCE_HOME: home });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
