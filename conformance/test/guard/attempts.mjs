// Tries every way out the guard must close, then one loopback request; prints what happened.
import dgram from 'node:dgram';
import dns from 'node:dns';
import { createServer, get } from 'node:http';
import net from 'node:net';

const outcome = (promise) =>
  promise.then(
    () => 'went through',
    (error) => String(error?.cause?.message ?? error?.message ?? error),
  );
const viaCallback = (start) => outcome(new Promise((resolve, reject) => start(resolve, reject)));
const outcomes = {
  // 192.0.2.0/24 is TEST-NET-1 (documentation only); the stub keeps it from being sent anyway.
  net: await viaCallback((resolve, reject) =>
    net.connect(80, '192.0.2.1').on('connect', resolve).on('error', reject),
  ),
  fetch: await outcome(fetch('http://192.0.2.1:8080/')),
  httpName: await viaCallback((resolve, reject) =>
    get('http://example.invalid/', resolve).on('error', reject),
  ),
  lookup: await viaCallback((resolve, reject) =>
    dns.lookup('example.invalid', (e) => (e ? reject(e) : resolve())),
  ),
  lookupPromise: await outcome(dns.promises.lookup('example.invalid')),
  resolve4: await outcome((async () => dns.resolve4('example.invalid', () => {}))()),
  resolverResolve4: await outcome((async () => new dns.Resolver().resolve4('example.invalid', () => {}))()),
  resolve4Promise: await outcome(dns.promises.resolve4('example.invalid')),
  udp: await outcome((async () => dgram.createSocket('udp4'))()),
};
const server = createServer((_req, res) => res.end('local'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const local = await fetch(`http://127.0.0.1:${server.address().port}/`).then((r) => r.text());
const localhost = await fetch(`http://localhost:${server.address().port}/`).then(
  (r) => r.text(),
  (e) => String(e.cause?.message ?? e.message),
);
server.close();
process.stdout.write(JSON.stringify({ outcomes, local, localhost, reached: globalThis.reached }));
