// The practical ceiling for any relay here: two pipe() calls, no parsing, no checks.
// usage: node bare-relay.mjs TARGET_PORT [--connect]  (listens on 127.0.0.1, prints its port on stderr)
// With --connect it speaks just enough CONNECT to be measured like a proxy: it reads the head up to
// the blank line, dials 127.0.0.1:TARGET_PORT whatever the head says, answers 200 once connected,
// then pipes. That is the floor of a CONNECT setup in Node: no allowlist, no address checks, no log.
import { connect, createServer } from 'node:net';

const targetPort = Number(process.argv[2]);
const connectMode = process.argv.includes('--connect');
const ESTABLISHED = Buffer.from('HTTP/1.1 200 Connection Established\r\n\r\n', 'latin1');

function relay(client, rest) {
  const upstream = connect({ host: '127.0.0.1', port: targetPort, allowHalfOpen: true, noDelay: true });
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  if (!connectMode) {
    client.pipe(upstream);
    upstream.pipe(client);
    return;
  }
  upstream.once('connect', () => {
    client.write(ESTABLISHED);
    if (rest.length > 0) upstream.write(rest);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
}

const server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
  if (!connectMode) return relay(client, Buffer.alloc(0));
  client.on('error', () => client.destroy());
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    client.off('data', onData);
    client.pause();
    relay(client, head.subarray(end + 4));
  };
  client.on('data', onData);
});
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
