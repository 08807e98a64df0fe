import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bytesSinceEventEnd, guardedFetch, MAX_RESPONSE_BYTES, noRedirectFetch } from './remote.js';

const enc = (text: string) => new TextEncoder().encode(text);

describe('bytesSinceEventEnd', () => {
  it('restarts counting after each blank line, whatever the line endings and chunking', () => {
    expect(bytesSinceEventEnd(enc('data: a\n\ndata: b'), 0, 0)).toBe(7);
    expect(bytesSinceEventEnd(enc('data: a\r\n\r\nxy'), 0, 0)).toBe(2);
    expect(bytesSinceEventEnd(enc('more'), 10, 0)).toBe(14);
    expect(bytesSinceEventEnd(enc('\ndata'), 10, 10)).toBe(4);
  });
});

describe('noRedirectFetch', () => {
  async function serve(handler: Parameters<typeof createServer>[1]) {
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
      close: () => server.close(),
    };
  }

  it('refuses a redirect instead of following it', async () => {
    const s = await serve((_q, r) => r.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end());
    await expect(noRedirectFetch(s.url, { method: 'POST' })).rejects.toThrow(
      /307 .*redirects are not followed/,
    );
    s.close();
  });

  it('refuses an answer declared over the cap without reading it', async () => {
    const s = await serve((_q, r) => {
      r.writeHead(200, { 'content-length': String(MAX_RESPONSE_BYTES + 1) });
      r.end();
    });
    await expect(noRedirectFetch(s.url, { method: 'POST' })).rejects.toThrow(/over the 16777216-byte cap/);
    s.close();
  });

  it('cuts off an event stream whose one event never ends', async () => {
    const s = await serve((_q, r) => {
      r.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = `data: ${'x'.repeat(1024 * 1024)}`;
      let sent = 0;
      const more = () => {
        while (sent < 20 && r.write(chunk)) sent++;
        if (sent < 20) r.once('drain', more);
        else r.end();
      };
      more();
    });
    const response = await noRedirectFetch(s.url, { method: 'GET' });
    await expect(response.text()).rejects.toThrow(/exceeded 16777216 bytes/);
    s.close();
  });

  it("cuts off a call's answer stream over the cap and ends that call (the watcher counts it)", async () => {
    const s = await serve((_q, r) => {
      r.writeHead(200, { 'content-type': 'text/event-stream' });
      // Many small, well-formed progress events: each fine, together over the cap.
      const event = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1, message: 'z'.repeat(64 * 1024) } })}\n\n`;
      let sent = 0;
      const more = () => {
        while (sent < 300 && r.write(event)) sent++;
        if (sent < 300) r.once('drain', more);
        else r.end();
      };
      more();
    });
    const broken: string[] = [];
    const fetchGuarded = guardedFetch({
      maxAnswerBytes: 1024 * 1024,
      onCallBroken: (token, error) => broken.push(`${token}: ${error.code}`),
    });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'x', _meta: { progressToken: 'rf-call' } },
    });
    const response = await fetchGuarded(s.url, { method: 'POST', body });
    await expect(response.text()).rejects.toThrow(/exceeded 1048576 bytes/);
    expect(broken).toEqual(['rf-call: UPSTREAM_ANSWER_TOO_LARGE']);
    s.close();
  });

  it('lets a long event stream of small events through', async () => {
    const s = await serve((_q, r) => {
      r.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 40; i++) r.write(`data: ${'y'.repeat(512 * 1024)}\n\n`);
      r.end();
    });
    const response = await noRedirectFetch(s.url, { method: 'GET' });
    expect((await response.text()).length).toBeGreaterThan(MAX_RESPONSE_BYTES);
    s.close();
  });
});
