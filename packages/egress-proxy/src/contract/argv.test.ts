import { describe, expect, it } from 'vitest';
import { buildSidecarArgv, parseSidecarArgv, type SidecarArgvInput } from './index.js';

const HINT = '\nRun ringfence-egress-proxy --help for usage.';

/** What `parseSidecarArgv` gives back for an input built with the defaults filled in. */
function expected(input: SidecarArgvInput) {
  return {
    help: false,
    listen: input.listen,
    allow: input.allow,
    allowAddresses: input.allowAddresses ?? [],
    resolve: input.resolve ?? [],
    lifeline: input.lifeline ?? false,
    dnsServers: [],
    ...(input.maxTunnels !== undefined ? { maxTunnels: input.maxTunnels } : {}),
    ...(input.idleTimeoutSec !== undefined ? { idleTimeoutSec: input.idleTimeoutSec } : {}),
  };
}

function refusal(argv: readonly string[]): { code: string; message: string } {
  try {
    parseSidecarArgv(argv);
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error(`accepted ${JSON.stringify(argv)}`);
}

describe('buildSidecarArgv', () => {
  it('writes the command line the gateway has always given the sidecar', () => {
    expect(
      buildSidecarArgv({
        listen: { host: '0.0.0.0', port: 3128 },
        lifeline: true,
        allow: ['api.example.com', '*.example.org:8443'],
        allowAddresses: ['10.20.0.0/16'],
      }),
    ).toEqual([
      '--listen',
      '0.0.0.0:3128',
      '--lifeline',
      '--allow',
      'api.example.com',
      '--allow',
      '*.example.org:8443',
      '--allow-address',
      '10.20.0.0/16',
    ]);
  });

  it.each<[string, SidecarArgvInput]>([
    [
      'the sidecar shape',
      { listen: { host: '0.0.0.0', port: 3128 }, allow: ['api.example.com'], lifeline: true },
    ],
    ['an IPv6 listener', { listen: { host: '::', port: 3128 }, allow: ['a.test'] }],
    [
      'every contract flag',
      {
        listen: { host: '127.0.0.1', port: 0 },
        allow: ['a.test', '*.b.test', 'c.test:8443', 'ÄÖ.example'],
        allowAddresses: ['10.0.0.0/8', 'fd00::/8', '192.0.2.7'],
        resolve: ['a.test=127.0.0.1', 'a.test=::1'],
        lifeline: true,
        maxTunnels: 7,
        idleTimeoutSec: 86_400,
      },
    ],
  ])('round-trips %s through the parser', (_label, input) => {
    expect(parseSidecarArgv(buildSidecarArgv(input))).toEqual(expected(input));
  });

  it.each<[string, Partial<SidecarArgvInput>, string, RegExp]>([
    [
      'an IP as an allow host',
      { allow: ['10.0.0.1'] },
      'EGRESS_BAD_ALLOW_ENTRY',
      /IP addresses cannot be allowed/,
    ],
    ['an empty allow host', { allow: [''] }, 'EGRESS_BAD_ALLOW_ENTRY', /--allow "": not a valid host name/],
    ['no allow host', { allow: [] }, 'EGRESS_USAGE', /at least one --allow/],
    [
      'a range with a prefix of 99',
      { allowAddresses: ['999.1.1.1/99'] },
      'EGRESS_BAD_CIDR',
      /"999\.1\.1\.1\/99" is not/,
    ],
    [
      'an IPv4 prefix of 33',
      { allowAddresses: ['10.0.0.0/33'] },
      'EGRESS_BAD_CIDR',
      /"10\.0\.0\.0\/33" is not/,
    ],
    ['an IPv6 prefix of 129', { allowAddresses: ['::1/129'] }, 'EGRESS_BAD_CIDR', /"::1\/129" is not/],
    ['an empty range', { allowAddresses: [''] }, 'EGRESS_BAD_CIDR', /"" is not an address range/],
    ['a bad pin', { resolve: ['a.test=nope'] }, 'EGRESS_BAD_RESOLVE_PIN', /NAME=IP/],
    [
      'a port past 65535',
      { listen: { host: '0.0.0.0', port: 65536 } },
      'EGRESS_USAGE',
      /--listen takes HOST:PORT/,
    ],
    [
      'a fractional port',
      { listen: { host: '0.0.0.0', port: 3128.5 } },
      'EGRESS_USAGE',
      /--listen takes HOST:PORT/,
    ],
    [
      'zero tunnels',
      { maxTunnels: 0 },
      'EGRESS_USAGE',
      /--max-tunnels takes a whole number from 1 to 1000000, not "0"/,
    ],
    [
      'a day and a second idle',
      { idleTimeoutSec: 86_401 },
      'EGRESS_USAGE',
      /--idle-timeout takes a whole number/,
    ],
    ['a flag as a host', { allow: ['--lifeline'] }, 'EGRESS_BAD_ALLOW_ENTRY', /--allow "--lifeline"/],
  ])('refuses %s with the proxy’s own error', (_label, change, code, message) => {
    const input = { listen: { host: '0.0.0.0', port: 3128 }, allow: ['a.test'], ...change };
    expect(() => buildSidecarArgv(input)).toThrow(
      expect.objectContaining({ code, message: expect.stringMatching(message) }),
    );
  });
});

describe('parseSidecarArgv', () => {
  const base = ['--listen', '127.0.0.1:0', '--allow', 'a.test'];

  it('reads --flag value and --flag=value alike, and the hidden test flags', () => {
    const parsed = parseSidecarArgv([
      '--listen=[::1]:3128',
      '--allow=a.test',
      '--allow',
      'b.test:8080',
      '--allow-address=10.0.0.0/8',
      '--resolve',
      'a.test=127.0.0.1',
      '--lifeline',
      '--max-tunnels=3',
      '--idle-timeout',
      '9',
      '--dns-server',
      '127.0.0.1:5353',
      '--dns-server=127.0.0.1:5354',
      '--connect-timeout-ms=100',
      '--header-timeout-ms',
      '200',
      '--dns-timeout-ms=300',
    ]);
    expect(parsed).toEqual({
      help: false,
      listen: { host: '::1', port: 3128 },
      allow: ['a.test', 'b.test:8080'],
      allowAddresses: ['10.0.0.0/8'],
      resolve: ['a.test=127.0.0.1'],
      lifeline: true,
      maxTunnels: 3,
      idleTimeoutSec: 9,
      dnsServers: ['127.0.0.1:5353', '127.0.0.1:5354'],
      connectTimeoutMs: 100,
      headerTimeoutMs: 200,
      dnsTimeoutMs: 300,
    });
  });

  it('the last --listen wins, as before', () => {
    const parsed = parseSidecarArgv([
      '--listen',
      '127.0.0.1:1',
      '--listen',
      '127.0.0.1:2',
      '--allow',
      'a.test',
    ]);
    expect(parsed).toMatchObject({ listen: { host: '127.0.0.1', port: 2 } });
  });

  it.each([['--help'], ['-h'], ['-h', '--listen', '127.0.0.1:0']])(
    '%s asks for help and skips the required flags',
    (...argv) => {
      expect(parseSidecarArgv(argv)).toEqual({ help: true });
    },
  );

  it.each([
    [[...base, '--bogus'], 'unknown argument "--bogus"'],
    [[...base, '--bogus=1'], 'unknown argument "--bogus=1"'],
    [[...base, 'stray'], 'unknown argument "stray"'],
    [[...base, '--', '--lifeline'], 'unknown argument "--"'],
    [[...base, '-'], 'unknown argument "-"'],
    [[...base, ''], 'unknown argument ""'],
    [[...base, '-x'], 'unknown argument "-x"'],
    [[...base, '-hh'], 'unknown argument "-hh"'],
    [[...base, '-h=1'], 'unknown argument "-h=1"'],
    [[...base, '--h'], 'unknown argument "--h"'],
    [[...base, '--__proto__'], 'unknown argument "--__proto__"'],
    [[...base, '--toString'], 'unknown argument "--toString"'],
    [[...base, '--constructor=x'], 'unknown argument "--constructor=x"'],
    [['--help', '--bogus'], 'unknown argument "--bogus"'],
    [[...base, '--listen'], '--listen needs a value'],
    [['--listen', '127.0.0.1:0', '--allow'], '--allow needs a value'],
    [[...base, '--allow-address'], '--allow-address needs a value'],
    [[...base, '--max-tunnels'], '--max-tunnels needs a value'],
    [[...base, '--dns-timeout-ms'], '--dns-timeout-ms needs a value'],
    [[...base, '--lifeline=false'], '--lifeline takes no value, not "false"'],
    [[...base, '--help=1'], '--help takes no value, not "1"'],
    [['--allow', 'a.test'], '--listen HOST:PORT is required'],
    [
      ['--listen', '127.0.0.1:0'],
      'at least one --allow HOST[:PORT] is required (the proxy refuses everything else)',
    ],
    [
      ['--listen', '127.0.0.1', '--allow', 'a.test'],
      '--listen takes HOST:PORT (e.g. 127.0.0.1:3128 or [::1]:3128), not "127.0.0.1"',
    ],
    [['--listen', '[::1]:65536', '--allow', 'a.test'], '--listen takes HOST:PORT'],
    [[...base, '--max-tunnels', '1e3'], '--max-tunnels takes a whole number from 1 to 1000000, not "1e3"'],
    [[...base, '--max-tunnels', '1000001'], '--max-tunnels takes a whole number from 1 to 1000000'],
    [[...base, '--idle-timeout', '-1'], '--idle-timeout takes a whole number from 1 to 86400, not "-1"'],
    [
      [...base, '--connect-timeout-ms', '600001'],
      '--connect-timeout-ms takes a whole number from 1 to 600000',
    ],
  ])('usage error (EGRESS_USAGE): %j', (argv, message) => {
    const error = refusal(argv);
    expect(error.code).toBe('EGRESS_USAGE');
    expect(error.message).toContain(message);
    expect(error.message.endsWith(HINT)).toBe(true);
  });

  it('reports the first problem in order, usage before values', () => {
    expect(refusal(['--max-tunnels', '0', '--bogus']).message).toContain('--max-tunnels');
    expect(refusal(['--listen', '127.0.0.1:0', '--allow', '10.0.0.1', '--bogus']).message).toContain(
      'unknown argument',
    );
    expect(refusal(['--listen', '127.0.0.1:0', '--allow', '10.0.0.1', '--allow-address', 'x']).code).toBe(
      'EGRESS_BAD_ALLOW_ENTRY',
    );
  });

  it('takes the next argument as a value even when it looks like a flag', () => {
    const error = refusal(['--listen', '127.0.0.1:0', '--allow', '--lifeline']);
    expect(error.code).toBe('EGRESS_BAD_ALLOW_ENTRY');
    expect(error.message).toContain('--allow "--lifeline"');
  });

  it.each([
    ['--allow', '10.0.0.1', 'EGRESS_BAD_ALLOW_ENTRY'],
    ['--allow', '', 'EGRESS_BAD_ALLOW_ENTRY'],
    ['--allow-address', '999.1.1.1/99', 'EGRESS_BAD_CIDR'],
    ['--allow-address', '10.0.0.0/33', 'EGRESS_BAD_CIDR'],
    ['--allow-address', '::1/129', 'EGRESS_BAD_CIDR'],
    ['--allow-address', '', 'EGRESS_BAD_CIDR'],
    ['--resolve', 'a.test=', 'EGRESS_BAD_RESOLVE_PIN'],
    ['--resolve', '=127.0.0.1', 'EGRESS_BAD_RESOLVE_PIN'],
  ])('validates values: %s %j', (flag, value, code) => {
    expect(refusal([...base, flag, value]).code).toBe(code);
  });
});
