// The practical ceiling for any relay here: two pipe() calls, no parsing, no checks.
// usage: node bare-relay.mjs TARGET_PORT  (listens on 127.0.0.1, prints its port on stderr)
import { connect, createServer } from 'node:net';

const targetPort = Number(process.argv[2]);
const server = createServer({ allowHalfOpen: true }, (client) => {
  const upstream = connect({ host: '127.0.0.1', port: targetPort, allowHalfOpen: true });
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
});
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
