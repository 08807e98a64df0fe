// A 2025 client → mcp serve → a remote server that offers both eras (the conformance v2 fixture,
// as any v2 SDK server on HTTP): ringfence speaks 2026-07-28 to the server, and serves this
// client's calls over a 2025 session to the same URL, so the server's mid-call elicitation and
// sampling reach the client as they would directly (issue 22: "2025 clients and servers keep
// every check they pass today"). Loopback only, no containers.
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { startWithReadyLine, stopAll } from '../helpers/processes.js';

const FIXTURE = new URL('../../conformance/fixtures/next/server.mjs', import.meta.url).pathname;

let home: string;
let served: ServedClient;
const asked: string[] = [];

beforeAll(async () => {
  home = await freshHome();
  const { ready } = await startWithReadyLine<{ url: string }>(process.execPath, [FIXTURE]);
  const added = await ringfence(
    ['mcp', 'add', 'both', '--url', ready.url, '--allow-elicitation', '--allow-sampling'],
    { RINGFENCE_HOME: home },
  );
  expect(added.code, added.stderr).toBe(0);
  served = await connectStdio(home, {}, { elicitation: {}, sampling: {} });
  served.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(`elicitation: ${String(request.params.message)}`);
    return { action: 'accept', content: { response: 'yes' } };
  });
  served.client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked.push('sampling');
    return { role: 'assistant', model: 'm', content: { type: 'text', text: 'sampled' } };
  });
}, 60_000);

afterAll(async () => {
  await served?.close().catch(() => {});
  await stopAll();
});

describe('a 2025 client of a server that offers both eras', () => {
  it("is asked the server's mid-call elicitation and sampling on its session, as directly", async () => {
    const elicited = await served.client.callTool({
      name: 'both_test_elicitation',
      arguments: { message: 'Continue?' },
    });
    expect(elicited.isError, firstText(elicited)).toBeFalsy();
    expect(firstText(elicited)).toContain('action=accept');
    const sampled = await served.client.callTool({
      name: 'both_test_sampling',
      arguments: { prompt: 'hi' },
    });
    expect(sampled.isError, firstText(sampled)).toBeFalsy();
    expect(firstText(sampled)).toContain('LLM response: sampled');
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatch(/^elicitation: .*Continue\?/s);
  });

  it('mcp ls says which era each kind of client is served in', async () => {
    const listed = await ringfence(['mcp', 'ls'], { RINGFENCE_HOME: home });
    expect(listed.stdout).toMatch(/both .*speaks MCP 2026-07-28 \(2025 to 2025 clients\)/);
  });
});
