import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeTraceRequest } from './__fixtures__/otlp-decode.js';
import { BatchExporter, REPORT_INTERVAL_MS } from './exporter.js';
import type { FinishedSpan } from './span.js';

const scope = {
  resource: [['service.name', 'ringfence']] as const,
  scopeName: 'ringfence',
  scopeVersion: '',
};
const settings = { delayMs: 10, maxQueue: 100, maxBatch: 50, timeoutMs: 1000 };

const span = (n: number): FinishedSpan => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: (n + 1).toString(16).padStart(16, '0'),
  name: `span ${n}`,
  kind: 1,
  startMs: 1,
  endMs: 2,
  attributes: [],
  status: 0,
});

interface Received {
  headers: IncomingMessage['headers'];
  url: string;
  names: string[];
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A loopback OTLP/HTTP receiver answering `status`. */
async function receiver(status = 200): Promise<{ url: URL; got: Received[] }> {
  const got: Received[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const names = decodeTraceRequest(Buffer.concat(chunks)).flatMap((r) => r.spans.map((s) => s.name));
      got.push({ headers: req.headers, url: req.url ?? '', names });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/v1/traces`), got };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('the batch exporter', () => {
  it('posts protobuf batches to the collector with its headers, in order, none bigger than the batch size', async () => {
    const { url, got } = await receiver();
    const exporter = new BatchExporter(
      { url, headers: { authorization: 'Bearer k' } },
      scope,
      settings,
      () => {},
    );
    for (let i = 0; i < 120; i++) exporter.add(span(i));
    await until(() => exporter.exported === 100);
    // 120 offered to a queue of 100: 20 dropped, the rest sent in batches of at most 50.
    expect(exporter.exported).toBe(100);
    expect(got.map((g) => g.names.length).every((n) => n <= 50)).toBe(true);
    expect(got.flatMap((g) => g.names)).toEqual(Array.from({ length: 100 }, (_, i) => `span ${i}`));
    expect(got[0]?.headers['content-type']).toBe('application/x-protobuf');
    expect(got[0]?.headers.authorization).toBe('Bearer k');
    expect(got[0]?.url).toBe('/v1/traces');
  });

  it('never throws into a call and says a failing collector on stderr at most once a minute, without its headers', async () => {
    const { url } = await receiver(503);
    const said: string[] = [];
    const exporter = new BatchExporter(
      { url: new URL(`http://user:pw@${url.host}/v1/traces`), headers: { authorization: 'Bearer s3cret' } },
      scope,
      settings,
      (line) => said.push(line),
    );
    for (let round = 0; round < 3; round++) {
      expect(() => exporter.add(span(round))).not.toThrow();
      await exporter.flush(1000);
    }
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^ringfence: traces: 1 span\(s\) could not be exported to http:\/\/127\.0\.0\.1:\d+\/v1\/traces \(the collector answered HTTP 503\)/,
    );
    expect(said[0]).not.toMatch(/s3cret|user|pw@/);
    expect(exporter.exported).toBe(0);
  });

  it('reports again after a minute, counting what was lost meanwhile', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const said: string[] = [];
      const exporter = new BatchExporter(
        { url: new URL('http://127.0.0.1:1/v1/traces'), headers: {} },
        scope,
        settings,
        (line) => said.push(line),
        async () => {
          throw new Error('ECONNREFUSED');
        },
      );
      exporter.add(span(1));
      await exporter.flush();
      exporter.add(span(2));
      exporter.add(span(3));
      await exporter.flush();
      expect(said).toHaveLength(1);
      vi.setSystemTime(Date.now() + REPORT_INTERVAL_MS);
      exporter.add(span(4));
      await exporter.flush();
      expect(said).toHaveLength(2);
      expect(said[1]).toMatch(/: 3 span\(s\) could not be exported/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up on a collector that never answers within the timeout, and a flush does not outlive its bound', async () => {
    server = createServer(() => {}); // reads nothing, answers nothing
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const said: string[] = [];
    const exporter = new BatchExporter(
      { url: new URL(`http://127.0.0.1:${port}/v1/traces`), headers: {} },
      scope,
      { ...settings, timeoutMs: 100 },
      (line) => said.push(line),
    );
    exporter.add(span(1));
    const started = Date.now();
    await exporter.flush(2000);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(said[0]).toMatch(/no answer within 100 ms/);
    server.closeAllConnections();
  });
});
