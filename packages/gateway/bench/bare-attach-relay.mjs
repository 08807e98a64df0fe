#!/usr/bin/env node
// The floor of a contained call for call-cpu.bench.mjs (BENCH_VARIANT=bare-attach): the probe
// image in a container, reached through the gateway's own attach stream (runtime/attach.ts: the
// engine's hijacked socket, Docker's frames split by FrameDemux), with nothing else between the
// client's pipe and the server's: each line from stdin goes to the container's stdin as it is,
// each line of its stdout comes back to stdout as it is. No MCP, no checks, no audit: what is left
// is the cost of the pipes themselves, the least a contained call can cost the gateway's process.
import { attachStdio, createDockerClient } from '@ringfence/gateway/runtime';

const image = process.argv[2];
if (!image) throw new Error('usage: bare-attach-relay.mjs IMAGE');
const docker = createDockerClient();
const container = await docker.createContainer({
  Image: image,
  OpenStdin: true,
  StdinOnce: false,
  AttachStdin: true,
  AttachStdout: true,
  AttachStderr: true,
  Tty: false,
  HostConfig: { NetworkMode: 'none', AutoRemove: true },
  Labels: { 'ringfence.bench': 'bare-attach' },
});
const io = await attachStdio(docker, container);
await container.start();

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  // Whole lines only, one write each (as the gateway writes one message per write).
  const lines = (pending + text).split('\n');
  pending = lines.pop();
  for (const line of lines) io.stdin.write(`${line}\n`);
});
io.stdout.on('data', (bytes) => process.stdout.write(bytes));
io.stderr.resume();

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  io.stdin.end();
  await container.kill().catch(() => {});
  process.exit(0);
}
process.stdin.once('end', stop);
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
