#!/usr/bin/env node
// The contained-only part of reading an answer, without Docker: Docker's attach frames (as the
// engine sends them, in socket-sized chunks) → stdout/stderr split → line framing → JSON-RPC
// message, for (a) dockerode's demuxStream into PassThrough streams, as before, and (b) the
// gateway's FrameDemux (runtime/attach.ts). Same StreamTransport after both. CPU µs per message,
// medians of BENCH_ROUNDS interleaved rounds; BENCH_MESSAGES messages per round and size.
import { PassThrough, Readable } from 'node:stream';
import Modem from 'docker-modem';
import { FrameDemux } from '../dist/runtime/attach.js';
import { StreamTransport } from '../dist/upstream/stream-transport.js';
import { median } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20_000);
const FRAME = 32 * 1024; // what the engine writes per frame at most (its copy buffer)
const CHUNK = 64 * 1024; // what one socket read returns at most

const frame = (type, payload) => {
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return [header, payload];
};
/**
 * `count` answers of `bytes` as the engine sends them, with a stderr line every 50 answers; one
 * socket read per answer (as when calls come one at a time), or `perRead` answers per read.
 */
function stream(count, bytes, perRead = 1) {
  const chunks = [];
  let parts = [];
  for (let id = 0; id < count; id++) {
    const line = Buffer.from(
      `${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(Math.max(0, bytes - 80)) }] } })}\n`,
    );
    for (let i = 0; i < line.length; i += FRAME) parts.push(...frame(1, line.subarray(i, i + FRAME)));
    if (id % 50 === 0) parts.push(...frame(2, Buffer.from('a line on stderr\n')));
    if ((id + 1) % perRead !== 0 && id + 1 < count) continue;
    const all = Buffer.concat(parts);
    parts = [];
    for (let i = 0; i < all.length; i += CHUNK) chunks.push(Buffer.from(all.subarray(i, i + CHUNK)));
  }
  return chunks;
}

async function run(kind, chunks, count) {
  let received = 0;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  let feed;
  let stdout;
  if (kind === 'dockerode') {
    const socket = new PassThrough();
    stdout = new PassThrough();
    new Modem().demuxStream(socket, stdout, new PassThrough().resume());
    feed = (chunk) => socket.write(chunk);
  } else {
    stdout = new Readable({ read() {} });
    const stderr = new Readable({ read() {} });
    stderr.resume();
    const demux = new FrameDemux(
      (b) => stdout.push(b),
      (b) => stderr.push(b),
      () => {},
    );
    feed = (chunk) => demux.push(chunk);
  }
  const transport = new StreamTransport(stdout, new PassThrough(), undefined);
  transport.onmessage = () => {
    if (++received === count) done();
  };
  await transport.start();
  const cpu = process.cpuUsage();
  for (const chunk of chunks) feed(chunk);
  await finished;
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / count;
}

const out = {};
for (const [bytes, perRead] of [
  [300, 1],
  [300, 8],
  [16 * 1024, 1],
  [1024 * 1024, 1],
]) {
  const count = Math.max(20, Math.round(MESSAGES / Math.max(1, bytes / 1024)));
  const chunks = stream(count, bytes, perRead);
  const figures = { dockerode: [], frame_demux: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? ['frame_demux', 'dockerode'] : ['dockerode', 'frame_demux'];
    for (const kind of order) figures[kind].push(await run(kind, chunks, count));
  }
  out[`answer_${bytes}_bytes_${perRead}_per_read`] = {
    messages: count,
    cpu_us_per_message: {
      dockerode: Number(median(figures.dockerode).toFixed(1)),
      frame_demux: Number(median(figures.frame_demux).toFixed(1)),
    },
    ratio: Number((median(figures.frame_demux) / median(figures.dockerode)).toFixed(2)),
  };
}
console.log(JSON.stringify(out, null, 2));
