import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { FakeUpstream } from '../ports/__fixtures__/fake-upstream.js';
import type { AuditSink } from '../ports/audit.js';
import { runGateway } from './run.js';

const ok = async () => ({ ok: true });
const docs: HttpServerConfig = { name: 'docs', transport: 'http', url: 'https://example.invalid/mcp' };

it('mcp serve --metrics: its /healthz says 503 while the servers start, 200 once served, and the listener closes with the gateway', async () => {
  const home = await mkdtemp(join(tmpdir(), 'rf-run-metrics-'));
  let started: () => void = () => {};
  const starting = new Promise<void>((resolve) => {
    started = resolve;
  });
  const lines: string[] = [];
  const running = runGateway({
    home,
    servers: [docs],
    guard: { prepare: ok, checkArguments: ok, checkResult: ok },
    audit: { append: async () => 1 } as AuditSink,
    createUpstream: () =>
      new FakeUpstream('docs', {
        tools: [{ name: 'search', inputSchema: { type: 'object' } }],
        start: () => starting,
      }),
    log: (line) => lines.push(line),
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    metrics: { address: '127.0.0.1:0', registry: new GatewayMetrics() },
    httpToken: 'run-metrics-token',
  });
  try {
    let url: string | undefined;
    while (!url) {
      url = /metrics at (\S+)/.exec(lines.join('\n'))?.[1];
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const health = new URL('/healthz', url).href;
    expect((await fetch(health)).status).toBe(503);
    started();
    const gateway = await running;
    expect((await fetch(health)).status).toBe(200);
    expect((await fetch(url)).status).toBe(401);
    const scrape = await (
      await fetch(url, { headers: { authorization: 'Bearer run-metrics-token' } })
    ).text();
    expect(scrape).toContain('ringfence_sessions{transport="stdio"} 1');
    await gateway.close();
    await expect(fetch(health)).rejects.toThrow();
  } finally {
    started();
    await (await running.catch(() => undefined))?.close().catch(() => {});
    await rm(home, { recursive: true, force: true });
  }
});
