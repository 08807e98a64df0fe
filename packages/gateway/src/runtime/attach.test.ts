import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { attachStdio, FrameDemux } from './attach.js';

const frame = (type: number, payload: string | Buffer) => {
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(bytes.length, 4);
  return Buffer.concat([header, bytes]);
};

function demux() {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const corrupt: string[] = [];
  const d = new FrameDemux(
    (b) => out.push(Buffer.from(b)),
    (b) => err.push(Buffer.from(b)),
    (reason) => corrupt.push(reason),
  );
  return {
    d,
    out: () => Buffer.concat(out).toString(),
    err: () => Buffer.concat(err).toString(),
    corrupt,
    pieces: out,
  };
}

describe('FrameDemux', () => {
  const stream = Buffer.concat([
    frame(1, '{"jsonrpc":"2.0","id":1,'),
    frame(2, 'warning: on stderr\n'),
    frame(1, ''),
    frame(1, '"result":{}}\n'),
    frame(0, 'stdin echo goes to stderr\n'),
    frame(1, 'x'.repeat(70_000)),
  ]);

  it('splits stdout from stderr whatever the chunk boundaries, headers split included', () => {
    for (const size of [1, 2, 3, 7, 8, 9, 13, 4096, stream.length]) {
      const t = demux();
      for (let i = 0; i < stream.length; i += size) t.d.push(stream.subarray(i, i + size));
      expect(t.out()).toBe(`{"jsonrpc":"2.0","id":1,"result":{}}\n${'x'.repeat(70_000)}`);
      expect(t.err()).toBe('warning: on stderr\nstdin echo goes to stderr\n');
      expect(t.corrupt).toEqual([]);
    }
  });

  it('hands payload on as it comes, without waiting for a frame of the length its header claims', () => {
    const t = demux();
    // A header claiming 4 GiB: nothing is reserved or held back for it.
    const header = Buffer.alloc(8);
    header[0] = 1;
    header.writeUInt32BE(0xffff_ffff, 4);
    t.d.push(Buffer.concat([header, Buffer.from('abc')]));
    t.d.push(Buffer.from('def'));
    expect(t.out()).toBe('abcdef');
    expect(t.pieces).toHaveLength(2);
  });

  it("stops at a header that is not Docker's, and never passes it or what follows on as stdout", () => {
    for (const bad of [
      Buffer.from([3, 0, 0, 0, 0, 0, 0, 2]),
      Buffer.from([1, 0, 1, 0, 0, 0, 0, 2]),
      Buffer.from('{"jsonrp'),
    ]) {
      const t = demux();
      t.d.push(Buffer.concat([frame(1, 'ok\n'), bad, Buffer.from('{"jsonrpc":"2.0","id":9,"result":{}}\n')]));
      t.d.push(frame(1, 'later\n'));
      expect(t.out()).toBe('ok\n');
      expect(t.err()).toBe('');
      expect(t.corrupt).toHaveLength(1);
      expect(t.corrupt[0]).toMatch(/frame header that is not Docker's/);
    }
  });
});

describe('attachStdio', () => {
  /** An engine whose attach answers with `engine`: what is written to it is the container's output. */
  const attached = async () => {
    const engine = new PassThrough();
    const docker = {
      modem: { dial: (_: unknown, done: (e: null, s: PassThrough) => void) => done(null, engine) },
    } as unknown as Docker;
    const streams = await attachStdio(docker, { id: 'c1' } as Docker.Container);
    const read = (r: NodeJS.ReadableStream) =>
      new Promise<{ text: string; error?: string }>((resolve) => {
        let text = '';
        r.on('data', (b: Buffer) => {
          text += b;
        });
        r.on('end', () => resolve({ text }));
        r.on('error', (e: Error) => resolve({ text, error: e.message }));
      });
    return { engine, stdout: read(streams.stdout), stderr: read(streams.stderr) };
  };

  it('ends stdout and stderr when the attach stream ends', async () => {
    const t = await attached();
    t.engine.end(Buffer.concat([frame(1, 'out\n'), frame(2, 'err\n')]));
    expect(await t.stdout).toEqual({ text: 'out\n' });
    expect(await t.stderr).toEqual({ text: 'err\n' });
  });

  it('fails stdout with the reason when the attach stream breaks, rather than ending it as if the server closed', async () => {
    const t = await attached();
    t.engine.write(frame(1, 'out\n'));
    t.engine.destroy(new Error('read ECONNRESET'));
    expect(await t.stdout).toEqual({ text: 'out\n', error: 'read ECONNRESET' });
    expect(await t.stderr).toEqual({ text: '' });
  });

  it("fails stdout with the reason and closes the attach stream at a header that is not Docker's", async () => {
    const t = await attached();
    t.engine.write(Buffer.concat([frame(1, 'out\n'), Buffer.from('{"jsonrpc":"2.0"}\n')]));
    expect(await t.stdout).toEqual({
      text: 'out\n',
      error: expect.stringMatching(/frame header that is not Docker's/),
    });
    expect(await t.stderr).toEqual({ text: '' });
    expect(t.engine.destroyed).toBe(true);
  });
});
