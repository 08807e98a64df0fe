import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CALL_LIMITS } from '../config/limits.js';
import { PinStore, pinnedOf } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { Upstream } from '../ports/upstream.js';
import { Gateway } from './gateway.js';
import { listServerDefinitions } from './listings.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };

type Listing = 'tools' | 'prompts' | 'resources' | 'templates';

/** A server offering every kind, whose listings named in `failing` answer -32601. */
let failing: Set<Listing>;

const refuse = (what: Listing) => {
  if (failing.has(what)) throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
};

class ListingUpstream implements Upstream {
  readonly name = 'docs';
  readonly destination = 'remote fake';
  readonly limits = DEFAULT_CALL_LIMITS;
  async start() {}
  capabilities() {
    return { prompts: true, completions: false, logging: false, resources: true, subscribe: false };
  }
  async listTools() {
    refuse('tools');
    return { tools: [{ name: 'search', inputSchema: { type: 'object' } }], problems: [] };
  }
  async listPrompts() {
    refuse('prompts');
    return { prompts: [{ name: 'brief' }], problems: [] };
  }
  async listResources() {
    refuse('resources');
    return { resources: [{ uri: 'test://readme', name: 'readme', mimeType: 'text/plain' }], problems: [] };
  }
  async listResourceTemplates() {
    refuse('templates');
    return { resourceTemplates: [{ uriTemplate: 'test://page/{n}', name: 'page' }], problems: [] };
  }
  async readResource(uri: string) {
    return { contents: [{ uri, mimeType: 'text/plain', text: `content of ${uri}` }] };
  }
  async callTool() {
    return { content: [] };
  }
  async getPrompt() {
    return { messages: [] };
  }
  async complete(): Promise<unknown> {
    throw new Error('not offered');
  }
  async subscribeResource() {}
  onResourceUpdated() {}
  async setLoggingLevel() {}
  onListChanged() {}
  onLog() {}
  onServerRequest() {}
  onClosed() {}
  async close() {}
}

let home: string;
let logged: string[];
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-listings-'));
  logged = [];
  failing = new Set();
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function started(): Promise<Gateway> {
  const audit: AuditSink = { append: async () => 1 };
  const g = new Gateway({
    servers: [{ name: 'docs', transport: 'http', url: 'https://example.invalid/mcp' }],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: () => new ListingUpstream(),
    log: (line) => logged.push(line),
    session: 'test',
  });
  await g.start();
  return g;
}

describe('each listing of a server fails alone', () => {
  it('a server answering -32601 to resources/templates/list keeps its tools, prompts and resources, readable', async () => {
    failing.add('templates');
    const g = await started();
    expect(g.serverStates().get('docs')?.status).toBe('running');
    expect(g.listTools().map((t) => t.name)).toEqual(['docs_search']);
    expect(g.listPrompts().map((p) => p.name)).toEqual(['docs_brief']);
    const resources = g.resources.listResources();
    expect(resources).toHaveLength(1);
    expect(g.resources.listTemplates()).toEqual([]);
    const uri = String(resources[0]!.uri);
    const read = (await g.readResource(uri, {}, undefined)) as { contents: { text: string }[] };
    expect(read.contents[0]!.text).toBe('content of test://readme');
    await g.close();
    // Said on stderr: which listing failed, what it cost, and the server's error.
    expect(logged).toContainEqual(
      expect.stringMatching(
        /^ringfence: docs: listing its resource templates failed, so none is exposed: .*-32601.*Method not found/,
      ),
    );
    expect(logged.join('\n')).not.toMatch(/listing its resources failed/);
  });

  it('a failed templates listing leaves the template pins alone; the next good listing finds them pinned', async () => {
    await (await started()).close();
    const pinned = Object.keys(pinnedOf((await new PinStore(home).server('docs'))!, 'template'));
    expect(pinned).toEqual(['test://page/{n}']);
    failing.add('templates');
    await (await started()).close();
    const after = (await new PinStore(home).server('docs'))!;
    expect(Object.keys(pinnedOf(after, 'template'))).toEqual(pinned);
    failing.clear();
    const g = await started();
    expect(g.resources.listTemplates()).toHaveLength(1);
    expect(g.withheld()).toEqual([]);
    await g.close();
  });

  it('a failing resources listing keeps the templates; a failing prompts listing keeps everything else', async () => {
    failing = new Set(['resources', 'prompts']);
    const listed = await listServerDefinitions(new ListingUpstream());
    expect(listed.rawTools).toHaveLength(1);
    expect(listed.rawPrompts).toBeUndefined();
    expect(listed.rawResources).toBeUndefined();
    expect(listed.rawTemplates).toHaveLength(1);
    expect(listed.problems).toEqual([
      expect.stringMatching(/^listing its prompts failed, so none is exposed: /),
      expect.stringMatching(/^listing its resources failed, so none is exposed: /),
    ]);
  });

  it('a server that cannot list its tools is not served', async () => {
    failing.add('tools');
    await expect(listServerDefinitions(new ListingUpstream())).rejects.toThrow(/Method not found/);
    const g = await started();
    expect(g.serverStates().get('docs')?.status).toBe('failed');
    await g.close();
  });
});
