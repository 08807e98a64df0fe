import { createServer } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { rawRequest } from '../local-http/__fixtures__/raw-request.js';
import { parseExposition } from './__fixtures__/exposition.js';
import { GatewayMetrics } from './gateway-metrics.js';
import { type MetricsListener, metricsAddress, serveMetrics } from './server.js';

let listener: MetricsListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

const metrics = new GatewayMetrics();
metrics.begin({ method: 'tools/call', server: 'docs', name: 'search' }).decided({ allowed: true, rule: 'r' });

async function start(address: string, options: { insecureListen?: boolean; serving?: boolean } = {}) {
  listener = await serveMetrics({
    address,
    ...(options.insecureListen ? { insecureListen: true } : {}),
    token: () => 'scrape-token',
    render: () => metrics.render(),
    serving: () => options.serving ?? true,
  });
  return Number(new URL(listener.url).port);
}

it('takes PORT alone as 127.0.0.1:PORT', () => {
  expect(metricsAddress('9464')).toBe('127.0.0.1:9464');
  expect(metricsAddress('[::1]:9464')).toBe('[::1]:9464');
});

const auth = { authorization: 'Bearer scrape-token' };

it('serves the exposition on loopback only with the token (any account on the machine reaches loopback)', async () => {
  const port = await start('127.0.0.1:0');
  expect(listener?.tokenRequired).toBe(true);
  const none = await rawRequest(port, { path: '/metrics' });
  expect(none.status).toBe(401);
  expect(none.body).not.toContain('ringfence_');
  const wrong = await rawRequest(port, { path: '/metrics', headers: { authorization: 'Bearer nope' } });
  expect(wrong.status).toBe(401);
  const answer = await rawRequest(port, { path: '/metrics', headers: auth });
  expect(answer.status).toBe(200);
  expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(parseExposition(answer.body).length).toBeGreaterThan(0);
});

it('refuses a foreign Host or Origin (DNS rebinding), and any path but /metrics', async () => {
  const port = await start('127.0.0.1:0');
  expect((await rawRequest(port, { path: '/metrics', headers: { host: 'evil.example:80' } })).status).toBe(
    403,
  );
  const origin = await rawRequest(port, { path: '/metrics', headers: { origin: 'http://evil.example' } });
  expect(origin.status).toBe(403);
  expect((await rawRequest(port, { path: '/metrics/../metrics', headers: auth })).status).toBe(404);
  expect((await rawRequest(port, { path: '/metrics?x=1', headers: auth })).status).toBe(404);
  expect((await rawRequest(port, { method: 'POST', path: '/metrics', headers: auth })).status).toBe(405);
});

it('answers /healthz with any Host and nothing else; a near miss meets the usual checks', async () => {
  const port = await start('127.0.0.1:0');
  const probe = await rawRequest(port, { path: '/healthz', headers: { host: 'lb:1' } });
  expect([probe.status, probe.body]).toEqual([200, 'ok\n']);
  const near = await rawRequest(port, { path: '/healthz/../metrics', headers: { host: 'lb:1' } });
  expect(near.status).toBe(403);
  expect(near.body).not.toContain('ringfence_calls_total');
});

it('answers 503 on /healthz when the gateway cannot serve', async () => {
  const port = await start('127.0.0.1:0', { serving: false });
  expect((await rawRequest(port, { path: '/healthz' })).status).toBe(503);
});

it('refuses a non-loopback address unless --insecure-listen, and then needs the token', async () => {
  await expect(start('0.0.0.0:0')).rejects.toMatchObject({ code: 'LISTEN_NOT_LOOPBACK' });
  const port = await start('0.0.0.0:0', { insecureListen: true });
  expect(listener?.tokenRequired).toBe(true);
  const host = { host: `0.0.0.0:${port}` };
  const none = await rawRequest(port, { path: '/metrics', headers: host });
  expect(none.status).toBe(401);
  expect(none.body).not.toContain('ringfence_calls_total');
  const wrong = await rawRequest(port, {
    path: '/metrics',
    headers: { ...host, authorization: 'Bearer nope' },
  });
  expect(wrong.status).toBe(401);
  const right = await rawRequest(port, {
    path: '/metrics',
    headers: { ...host, authorization: 'Bearer scrape-token' },
  });
  expect(right.status).toBe(200);
  // The probe stays open to a supervisor without the token.
  expect((await rawRequest(port, { path: '/healthz' })).status).toBe(200);
});

it('says which port is taken, as a coded error', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as { port: number };
  await expect(start(`127.0.0.1:${port}`)).rejects.toMatchObject({
    code: 'LISTEN_ADDRESS',
    message: expect.stringContaining('give --metrics another port'),
  });
  taken.close();
});
