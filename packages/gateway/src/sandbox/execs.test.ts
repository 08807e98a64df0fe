import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { BackgroundExecs, TailBuffer } from './execs.js';
import { splitLog } from './lifecycle.js';

/** One frame of the engine's multiplexed stream: stream 1 stdout, 2 stderr. */
const frame = (stream: 1 | 2, text: string) => {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

/** A container whose execs are streams the test writes to and ends, with the exit code it chose. */
function fakeContainer() {
  const execs: { stream: PassThrough; exit: (code: number) => void; cmd: string[] }[] = [];
  const container = {
    exec: async (options: { Cmd: string[] }) => {
      const stream = new PassThrough();
      let code: number | undefined;
      const exit = (c: number) => {
        code = c;
        stream.end();
      };
      const entry = { stream, cmd: options.Cmd, exit };
      execs.push(entry);
      return {
        start: async () => stream,
        inspect: async () => ({ Running: code === undefined, ExitCode: code ?? null }),
      };
    },
  } as unknown as Docker.Container;
  return { container, execs };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('TailBuffer', () => {
  it('keeps the last bytes only, and counts what it dropped', () => {
    const buffer = new TailBuffer(5);
    for (const part of ['abc', 'defg', 'h']) buffer.push(Buffer.from(part));
    expect(buffer.bytes().toString()).toBe('defgh');
    expect(buffer.bytesSeen).toBe(8);
    expect(buffer.bytesDropped).toBe(3);
    buffer.push(Buffer.from('0123456789'));
    expect(buffer.bytes().toString()).toBe('56789');
  });
});

describe('BackgroundExecs', () => {
  it('reads each stream apart into its buffer and records the exit code once the command ends', async () => {
    const execs = new BackgroundExecs();
    const { container, execs: started } = fakeContainer();
    const record = await execs.start('c1', container, { name: 'box', command: ['node', '-v'] });
    expect(record.id).toMatch(/^x[0-9a-f]{12}$/);
    expect(record.running).toBe(true);
    started[0]!.stream.write(Buffer.concat([frame(1, 'out '), frame(2, 'err'), frame(1, 'more')]));
    started[0]!.exit(3);
    await settle();
    expect(execs.get('c1', record.id, 'box')).toMatchObject({ running: false, exitCode: 3 });
    expect(record.stdout.bytes().toString()).toBe('out more');
    expect(record.stderr.bytes().toString()).toBe('err');
  });

  it('a stream that is not the engine framing is never read as output (a forged header stops the reading)', async () => {
    const execs = new BackgroundExecs();
    const { container, execs: started } = fakeContainer();
    const record = await execs.start('c1', container, { name: 'box', command: ['x'] });
    started[0]!.stream.write(
      Buffer.concat([frame(1, 'fine'), Buffer.from('\u0009\u0000\u0000\u0000\u0000\u0000\u0000\u0003abc')]),
    );
    started[0]!.exit(0);
    await settle();
    expect(record.stdout.bytes().toString()).toBe('fine');
    expect(record.problem).toMatch(/could not be read on/);
  });

  it('refuses a fifth running command in one sandbox (another sandbox is counted apart)', async () => {
    const execs = new BackgroundExecs();
    const { container, execs: started } = fakeContainer();
    for (let i = 0; i < 4; i++) await execs.start('c1', container, { name: 'box', command: ['x'] });
    await expect(execs.start('c1', container, { name: 'box', command: ['x'] })).rejects.toThrow(
      /4 background commands already run in the sandbox "box"/,
    );
    await execs.start('c2', container, { name: 'other', command: ['x'] });
    started[0]!.exit(0);
    await settle();
    await execs.start('c1', container, { name: 'box', command: ['x'] });
    expect(started).toHaveLength(6);
  });

  it('keeps at most 16 per sandbox, the oldest ended going first; ids of another sandbox or gone sandboxes are unknown', async () => {
    const execs = new BackgroundExecs();
    const { container, execs: started } = fakeContainer();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push((await execs.start('c1', container, { name: 'box', command: ['x'] })).id);
      started[i]!.exit(0);
      await settle();
    }
    expect(execs.list('c1')).toHaveLength(16);
    expect(() => execs.get('c1', ids[0]!, 'box')).toThrow(/no background command/);
    expect(execs.get('c1', ids[19]!, 'box').exitCode).toBe(0);
    expect(() => execs.get('c2', ids[19]!, 'other')).toThrow(/no background command/);
    execs.retainOnly(['c2']);
    expect(execs.list('c1')).toEqual([]);
  });
});

describe('splitLog', () => {
  it("splits the engine's log into stdout and stderr, each capped to its end", () => {
    const { stdout, stderr } = splitLog(
      Buffer.concat([frame(1, 'hello\n'), frame(2, 'oops\n'), frame(1, 'world\n')]),
      8,
    );
    expect(stdout.bytes().toString()).toBe('o\nworld\n');
    expect(stdout.bytesDropped).toBe(4);
    expect(stderr.bytes().toString()).toBe('oops\n');
  });
});
