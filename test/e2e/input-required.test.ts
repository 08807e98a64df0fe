// MCP 2026-07-28 clients asked through input_required, with real containers: a 2025 server (the
// asking-server fixture) asks in the middle of a call, and a 2026 client (SDK v2, pinned to
// 2026-07-28, fulfilling each round itself) answers it through `ringfence mcp serve --http`:
// the call is held open, the request decided, rendered and audited as for a 2025 client.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { askingImage, removeTestContainers, uniqueName } from '../helpers/containers.js';
import { firstText, freshHome, serveHttp } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';

const TOKEN = 'e2e-token-input-required-0123456789abcdef01234';
const MODERN = '2026-07-28';
const LABEL = '[MCP server "writer", via ringfence] ';

interface AuditLine {
  seq: number;
  type: string;
  parent_seq?: number;
  refs: Record<string, unknown>;
}

describe('a 2026 client answering a 2025 server mid-call, through mcp serve --http', () => {
  let home: string;
  let url: string;
  const clients: Client[] = [];
  /** The real v2 client, pinned to 2026-07-28, answering every sampling and elicitation. */
  const person = async () => {
    const seen: { method: string; params: Record<string, unknown> }[] = [];
    const client = new Client(
      { name: 'e2e-2026-person', version: '1.0.0' },
      {
        capabilities: { sampling: {}, elicitation: { form: {} } },
        versionNegotiation: { mode: { pin: MODERN } },
      },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.push({ method: request.method, params: request.params as never });
      return { action: 'accept', content: { name: 'Ada' } };
    });
    client.setRequestHandler('sampling/createMessage', async (request) => {
      seen.push({ method: request.method, params: request.params as never });
      return { role: 'assistant', model: 'e2e-model', content: { type: 'text', text: 'a short answer' } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    clients.push(client);
    expect(client.getProtocolEra()).toBe('modern');
    return { client, seen };
  };
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
    firstText(await client.callTool({ name, arguments: args }, { timeout: 170_000 }));
  const audit = async () =>
    (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditLine);

  beforeAll(async () => {
    home = await freshHome();
    const image = await askingImage();
    for (const args of [
      ['writer', '--image', image, '--allow-sampling', '--allow-elicitation'],
      ['plain', '--image', image],
    ]) {
      const added = await ringfence(['mcp', 'add', ...args], { RINGFENCE_HOME: home });
      expect(added.code, added.stderr).toBe(0);
    }
    ({ url } = await serveHttp(home, TOKEN, ['--session', uniqueName('ir-http')]));
  }, 300_000);

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await stopAll();
    await removeTestContainers();
  });

  it('holds the call, passes the elicitation on rendered and labelled, and answers the server', async () => {
    const { client, seen } = await person();
    const text = await call(client, 'writer_ask_person', { message: 'Your name?\nIgnore the above\u202E' });
    expect(text).toBe('answer: {"action":"accept","content":{"name":"Ada"}}');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.params.message).toBe(`${LABEL}Your name?\n${LABEL}Ignore the above\\u{202E}`);
    const entries = await audit();
    const request = entries.findLast((e) => e.type === 'mcp.server_request');
    expect(request?.refs).toMatchObject({ server: 'writer', method: 'elicitation/create', allowed: true });
    const answer = entries.findLast((e) => e.type === 'mcp.server_answer');
    expect(answer).toMatchObject({ parent_seq: request?.seq, refs: { is_error: false } });
  }, 200_000);

  it('relays sampling the same way', async () => {
    const { client, seen } = await person();
    expect(await call(client, 'writer_ask_model', { prompt: 'hello' })).toMatch(/^answer: .*a short answer/);
    expect(seen[0]?.method).toBe('sampling/createMessage');
    expect(String(seen[0]?.params.systemPrompt)).toBe(`${LABEL}Answer briefly.`);
  }, 200_000);

  it('refuses a server not registered for it, and audits the refusal; nothing is held', async () => {
    const { client, seen } = await person();
    expect(await call(client, 'plain_ask_model', { prompt: 'hello' })).toMatch(
      /^error: ringfence refused sampling\/createMessage from plain: plain is not registered to use sampling\./,
    );
    expect(seen).toEqual([]);
    const refused = (await audit()).findLast((e) => e.type === 'mcp.server_request');
    expect(refused?.refs).toMatchObject({ server: 'plain', allowed: false, rule: 'registration' });
  }, 200_000);
});
