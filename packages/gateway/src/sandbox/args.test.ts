import { describe, expect, it } from 'vitest';
import { parseCreate, parseNameOnly, parseRun } from './args.js';
import { SandboxError } from './errors.js';

const refused = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SandboxError);
    return (error as SandboxError).message;
  }
  throw new Error('expected a refusal');
};

describe('sandbox tool arguments', () => {
  it('defaults: no network, no mounts, sleep as the main process, not persistent', () => {
    expect(parseCreate({ name: 'a', image: 'img' })).toEqual({
      name: 'a',
      image: 'img',
      hosts: [],
      egressAny: false,
      mounts: [],
      command: ['sleep', 'infinity'],
      persistent: false,
    });
  });

  it.each([
    [{ name: '../x', image: 'img' }, 'name'],
    [{ name: 'A', image: 'img' }, 'name'],
    [{ name: 'a'.repeat(33), image: 'img' }, 'name'],
    [{ name: 'a', image: '' }, 'image'],
    [{ name: 'a', image: 'img', egress: 'all' }, 'egress'],
    [{ name: 'a', image: 'img', egress: 'any', hosts: ['x.example'] }, 'not both'],
    [{ name: 'a', image: 'img', hosts: 'x.example' }, 'hosts'],
    [{ name: 'a', image: 'img', mounts: [{ path: 'x', mode: 'rwx' }] }, 'mode'],
    [{ name: 'a', image: 'img', mounts: [{ path: 'x', privileged: true }] }, 'path and mode'],
    [{ name: 'a', image: 'img', command: 'sleep 1' }, 'argv'],
    [{ name: 'a', image: 'img', privileged: true }, 'privileged'],
    // Hosts the proxy would refuse are refused before anything is made: an address (named hosts
    // never reach addresses), a flag smuggled as a host, a bare wildcard.
    [{ name: 'a', image: 'img', hosts: ['169.254.169.254'] }, '--sandbox-allow-address'],
    [{ name: 'a', image: 'img', hosts: ['--allow-address=0.0.0.0/0'] }, 'is refused'],
    [{ name: 'a', image: 'img', hosts: ['*'] }, 'is refused'],
    [{ name: 'a', image: 'img', hosts: ['a.example', 'b.example:99999'] }, 'b.example:99999'],
  ])('create refuses %j', (args, word) => {
    expect(refused(() => parseCreate(args as Record<string, unknown>))).toContain(word);
  });

  it('run: argv only, bounded timeout and output, absolute workdir', () => {
    expect(parseRun({ name: 'a', command: ['ls'] })).toEqual({
      name: 'a',
      command: ['ls'],
      timeoutMs: 60_000,
      maxOutputBytes: 65_536,
    });
    expect(refused(() => parseRun({ name: 'a', command: [] }))).toContain('argv');
    expect(refused(() => parseRun({ name: 'a', command: ['a\0b'] }))).toContain('NUL');
    expect(refused(() => parseRun({ name: 'a', command: [1] }))).toContain('argv');
    expect(refused(() => parseRun({ name: 'a', command: ['ls'], timeout_seconds: 601 }))).toContain('600');
    expect(refused(() => parseRun({ name: 'a', command: ['ls'], timeout_seconds: 1.5 }))).toContain('whole');
    expect(refused(() => parseRun({ name: 'a', command: ['ls'], max_output_bytes: 0 }))).toContain(
      'max_output',
    );
    expect(refused(() => parseRun({ name: 'a', command: ['ls'], workdir: 'rel' }))).toContain('absolute');
    expect(refused(() => parseRun({ name: 'a', command: ['ls'], user: 'root' }))).toContain('user');
  });

  it('delete takes a name only', () => {
    expect(parseNameOnly({ name: 'a' }, 'sandbox_delete')).toBe('a');
    expect(refused(() => parseNameOnly({ name: 'a', all: true }, 'sandbox_delete'))).toContain('all');
  });
});
