import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client,
  InMemoryTransport,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
} from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CALL_LIMITS } from '../config/limits.js';
import { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { ToolListing, Upstream } from '../ports/upstream.js';
import { NO_RESOURCES } from './__fixtures__/no-resources.js';
import { createEndpointServer } from './endpoint.js';
import { Gateway } from './gateway.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };

/** A server answering every call with members and content types only newer MCP versions define. */
const ANSWER = {
  content: [
    // structuredContent's JSON, as MCP asks: without an output schema, what lets it pass.
    { type: 'text', text: '{"n": 1}', _meta: { trace: 1 } },
    { type: 'audio', data: 'UklGRiQAAABXQVZF', mimeType: 'audio/wav' },
    { type: 'resource_link', uri: 'file:///etc/passwd', name: 'passwd' },
  ],
  structuredContent: { n: 1 },
  _meta: { trace: 2 },
};

/** The same items as prompt messages (one item each), with members no message or prompt defines. */
const PROMPT = {
  description: 'a brief',
  messages: [
    { role: 'user', content: ANSWER.content[0], _meta: { trace: 3 } },
    { role: 'assistant', content: ANSWER.content[1] },
    { role: 'user', content: ANSWER.content[2] },
    {
      role: 'user',
      content: { type: 'resource', resource: { uri: 'file:///home/you/.ssh/config', text: 'Host *' } },
    },
  ],
  _meta: { trace: 4 },
};

class HostileUpstream implements Upstream {
  readonly name = 'files';
  readonly destination = 'remote fake';
  /** What `prompts/get` answers; a test may replace it. */
  static prompt: unknown = PROMPT;
  readonly limits = DEFAULT_CALL_LIMITS;
  async start() {}
  capabilities() {
    return { prompts: true, completions: false, logging: false };
  }
  async listTools(): Promise<ToolListing> {
    return { tools: [{ name: 'read', description: 'read', inputSchema: { type: 'object' } }], problems: [] };
  }
  async listPrompts() {
    return { prompts: [{ name: 'brief', description: 'brief' }], problems: [] };
  }
  async callTool() {
    return structuredClone(ANSWER);
  }
  async getPrompt() {
    return structuredClone(HostileUpstream.prompt);
  }
  async complete(): Promise<unknown> {
    throw new Error('not offered');
  }
  readonly listResources = NO_RESOURCES.listResources;
  readonly listResourceTemplates = NO_RESOURCES.listResourceTemplates;
  readonly readResource = NO_RESOURCES.readResource;
  readonly subscribeResource = NO_RESOURCES.subscribeResource;
  readonly onResourceUpdated = NO_RESOURCES.onResourceUpdated;
  async setLoggingLevel() {}
  onListChanged() {}
  onLog() {}
  onServerRequest() {}
  onClosed() {}
  async close() {}
}

let home: string;
let dropped: unknown[];
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-endpoint-'));
  dropped = [];
});
afterEach(async () => {
  HostileUpstream.prompt = PROMPT;
  await rm(home, { recursive: true, force: true });
});

async function gateway(): Promise<Gateway> {
  const audit: AuditSink = {
    append: async (input) => {
      if (input.type === 'mcp.result') dropped.push(input.refs.dropped);
      return 1;
    },
  };
  const g = new Gateway({
    servers: [{ name: 'files', transport: 'http', url: 'https://example.invalid/mcp' }],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: () => new HostileUpstream(),
    log: () => {},
    session: 'test',
  });
  await g.start();
  return g;
}

/**
 * The SDK's client, asking for `requested` in its initialize (the SDK always asks for its latest),
 * and keeping every message exactly as it arrived, before the client's own schema strips anything.
 */
async function connect(g: Gateway, requested?: string) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  if (requested) {
    const send = clientSide.send.bind(clientSide);
    clientSide.send = (message: JSONRPCMessage, options) =>
      send(
        'method' in message && message.method === 'initialize'
          ? { ...message, params: { ...message.params, protocolVersion: requested } }
          : message,
        options,
      );
  }
  await createEndpointServer(g).connect(serverSide);
  const client = new Client({ name: 'endpoint-test', version: '1.0.0' });
  await client.connect(clientSide);
  const raw: JSONRPCMessage[] = [];
  const deliver = clientSide.onmessage!;
  clientSide.onmessage = (message, extra) => {
    raw.push(message);
    deliver(message, extra);
  };
  return { client, raw };
}

async function call(requested?: string) {
  const g = await gateway();
  const { client, raw } = await connect(g, requested);
  await client.listTools();
  await client.callTool({ name: 'files_read', arguments: {} });
  await client.close();
  await g.close();
  const answer = raw.find((m) => 'result' in m && 'content' in (m.result as object)) as { result: unknown };
  return answer.result as { content: { type: string; text?: string }[]; structuredContent?: unknown };
}

describe('the endpoint: results follow the protocol version negotiated with this client', () => {
  it('a client on the latest version gets audio and structuredContent, never _meta or a bare file: link', async () => {
    const result = await call();
    expect(result.content.map((c) => c.type)).toEqual(['text', 'audio', 'resource_link']);
    expect(result.structuredContent).toEqual({ n: 1 });
    // The link is there, pointing into the gateway's namespace: read through it, from files alone.
    expect((result.content[2] as { uri?: string }).uri).toMatch(/^ringfence:files\/file:/);
    expect(JSON.stringify(result)).not.toMatch(/_meta|(?<!ringfence:files\/)file:\//i);
    expect(dropped).toEqual([3]);
  });

  it('a 2025-03-26 client gets no resource_link and no structuredContent', async () => {
    const result = await call('2025-03-26');
    expect(result).toStrictEqual({
      content: [
        { type: 'text', text: '{"n": 1}' },
        { type: 'audio', data: 'UklGRiQAAABXQVZF', mimeType: 'audio/wav' },
        {
          type: 'text',
          text: 'ringfence: 1 content item(s) of files/read were not passed on: "resource_link" is not defined in MCP 2025-03-26, which this client uses.',
        },
      ],
    });
    expect(dropped).toEqual([4]);
  });

  it('a 2024-11-05 client gets no audio either', async () => {
    const result = await call('2024-11-05');
    expect(result.content.map((c) => c.type)).toEqual(['text', 'text']);
    expect(result.content[1]?.text).toContain('"audio" is not defined in MCP 2024-11-05');
    expect(dropped).toEqual([5]);
  });

  it('a client asking for a version the SDK does not speak is answered, and served, with the latest', async () => {
    expect(LATEST_PROTOCOL_VERSION >= '2025-06-18').toBe(true);
    const result = await call('1999-01-01');
    expect(result.content.map((c) => c.type)).toEqual(['text', 'audio', 'resource_link']);
  });
});

async function getPrompt(requested?: string) {
  const g = await gateway();
  const { client, raw } = await connect(g, requested);
  const answer = await client.getPrompt({ name: 'files_brief' }).catch((error: Error) => error);
  await client.close();
  await g.close();
  if (answer instanceof Error) return answer;
  const reply = raw.find((m) => 'result' in m && 'messages' in (m.result as object)) as { result: unknown };
  return reply.result as {
    description?: string;
    messages: { role: string; content: { type: string; text?: string; resource?: { uri: string } } }[];
  };
}

describe('the endpoint: prompt messages are sanitised like tool results', () => {
  it('a client on the latest version gets each message rebuilt: no _meta, every link and embedded URI in the namespace', async () => {
    const result = await getPrompt();
    if (result instanceof Error) throw result;
    expect(result.description).toBe('a brief');
    expect(result.messages.map((m) => [m.role, m.content.type])).toEqual([
      ['user', 'text'],
      ['assistant', 'audio'],
      ['user', 'resource_link'],
      ['user', 'resource'],
    ]);
    expect(Object.keys(result).sort()).toEqual(['description', 'messages']);
    expect(result.messages.every((m) => Object.keys(m).sort().join() === 'content,role')).toBe(true);
    expect((result.messages[2]?.content as { uri?: string } | undefined)?.uri).toMatch(
      /^ringfence:files\/file:/,
    );
    expect(result.messages[3]?.content.resource?.uri).toMatch(/^ringfence:files\/file:/);
    expect(JSON.stringify(result)).not.toMatch(/_meta|(?<!ringfence:files\/)file:\//i);
    // _meta of the result, of message 0 and of its item; the link's URI; the embedded URI.
    expect(dropped).toEqual([5]);
  });

  it('a 2024-11-05 client gets, in place of the audio message, the note that it was not passed on', async () => {
    const result = await getPrompt('2024-11-05');
    if (result instanceof Error) throw result;
    expect(result.messages[1]).toStrictEqual({
      role: 'assistant',
      content: {
        type: 'text',
        text: 'ringfence: 1 content item(s) of files/prompt brief were not passed on: "audio" is not defined in MCP 2024-11-05, which this client uses.',
      },
    });
    expect(result.messages.map((m) => m.content.type)).toEqual(['text', 'text', 'text', 'resource']);
  });

  it('a message item of a wrong type withholds the whole answer', async () => {
    HostileUpstream.prompt = {
      messages: [{ role: 'user', content: { type: 'image', data: 'not base64!', mimeType: 'image/png' } }],
    };
    const result = await getPrompt();
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toContain(
      'ringfence withheld the result of files/prompt brief: the server sent a malformed result (messages[0].content.data must be base64). The request reached the server',
    );
  });
});
