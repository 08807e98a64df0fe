import { describe, expect, it } from 'vitest';
import { parseServersFile } from '../config/servers.js';
import { parseKeyValues, parseMounts, planRegistration, type RegistrationInput } from './plan.js';

const plan = (
  input: Omit<RegistrationInput, 'name'> & { name?: string },
  defaultEgress: 'deny' | 'any' = 'deny',
) => planRegistration({ name: 'x', ...input }, { defaultEgress });

function refusal(run: () => unknown): { code?: string; message: string } {
  try {
    run();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a refusal');
}

describe('planRegistration', () => {
  it('builds a remote server from --url and --header', () => {
    expect(
      plan({
        url: 'https://mcp.example.com/mcp',
        headers: ['Authorization=Bearer a=b'],
        allowTools: ['search'],
      }),
    ).toEqual({
      transport: 'http',
      server: {
        name: 'x',
        transport: 'http',
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: 'Bearer a=b' },
        allow_tools: ['search'],
      },
    });
  });

  it('builds a contained draft: egress hosts lower-cased, mounts, env, command', () => {
    expect(
      plan({
        image: 'img:1',
        command: ['--stdio'],
        egressAllow: [' API.Example.com ', '*.example.org:8443'],
        egressAllowAddress: ['10.20.0.0/16'],
        env: ['A=1'],
        mounts: ['docs', 'out:rw', 'in:ro'],
      }),
    ).toEqual({
      transport: 'container',
      source: { image: 'img:1' },
      draft: {
        name: 'x',
        transport: 'container',
        command: ['--stdio'],
        egress: {
          mode: 'allow',
          hosts: ['api.example.com', '*.example.org:8443'],
          addresses: ['10.20.0.0/16'],
        },
        env: { A: '1' },
        mounts: [
          { path: 'docs', mode: 'ro' },
          { path: 'out', mode: 'rw' },
          { path: 'in', mode: 'ro' },
        ],
      },
    });
  });

  it('gives a server that names no hosts the policy default, unless --egress says otherwise', () => {
    const egressOf = (p: ReturnType<typeof plan>) =>
      p.transport === 'container' ? p.draft.egress : undefined;
    expect(egressOf(plan({ image: 'i' }))).toEqual({ mode: 'deny' });
    expect(egressOf(plan({ image: 'i' }, 'any'))).toEqual({ mode: 'any' });
    expect(egressOf(plan({ image: 'i', egress: 'deny' }, 'any'))).toEqual({ mode: 'deny' });
  });

  it('reads --npm as PACKAGE, PACKAGE@VERSION or PACKAGE@RANGE before anything is built or fetched', () => {
    expect(plan({ npm: '@scope/pkg@1.2.3' })).toMatchObject({
      source: { npm: { name: '@scope/pkg', wanted: '1.2.3' } },
    });
    expect(plan({ npm: '@scope/pkg' })).toMatchObject({
      source: { npm: { name: '@scope/pkg', wanted: 'latest' } },
    });
    expect(plan({ npm: 'pkg@^1.2' })).toMatchObject({ source: { npm: { name: 'pkg', wanted: '^1.2' } } });
    for (const bad of ['../pkg@1.0.0', 'pkg@', 'pkg@1.0.0;rm -rf /', 'pkg@$(id)']) {
      expect(refusal(() => plan({ npm: bad })).message).toMatch(/is not an npm package/);
    }
  });

  it.each([
    [{}, 'Give exactly one of --image, --npm or --url.'],
    [{ image: 'i', url: 'https://a.example/mcp' }, 'Give exactly one of --image, --npm or --url.'],
    [{ image: 'i', headers: ['A=b'] }, '--header applies to remote servers (--url) only.'],
    [{ url: 'https://a.example/mcp', env: ['A=b'] }, '--env applies to contained servers, not to --url.'],
    [
      { url: 'https://a.example/mcp', mounts: ['docs'] },
      '--mount applies to contained servers, not to --url.',
    ],
    [{ url: 'https://a.example/mcp', egress: 'any' }, '--egress applies to contained servers, not to --url.'],
    [
      { image: 'i', egress: 'any', egressAllow: ['a.example'] },
      '--egress and --egress-allow exclude each other: --egress-allow already means "only these hosts".',
    ],
    [
      { image: 'i', egressAllowAddress: ['10.0.0.0/8'] },
      '--egress-allow-address needs at least one --egress-allow host.',
    ],
    [{ image: 'i', env: ['NOVALUE'] }, '--env expects KEY=VALUE, got "NOVALUE"'],
    // `-e $TOKEN` expanded by the shell: the value given instead of KEY=VALUE is not shown (issue 21.6).
    [{ image: 'i', env: ['Zq7Lm2Xv9Tb4Nc8Wy3Kd6Hs1Fg5Jp0R'] }, '--env expects KEY=VALUE, got "***"'],
    [
      { url: 'https://a.example/mcp', headers: ['Authorization: Bearer abc.def'] },
      '--header expects KEY=VALUE, got "Authorization: ***"',
    ],
    // Nothing of a value is shown, short or long, whatever its header's name.
    [{ image: 'i', env: ['hunter2xyz'] }, '--env expects KEY=VALUE, got "***"'],
    [{ image: 'i', env: ['correct horse battery staple'] }, '--env expects KEY=VALUE, got "***"'],
    [
      { url: 'https://a.example/mcp', headers: ['X-Custom: s3cretPass'] },
      '--header expects KEY=VALUE, got "X-Custom: ***"',
    ],
    [
      { url: 'https://a.example/mcp', headers: ['X-Custom s3cretPass: x'] },
      '--header expects KEY=VALUE, got "***: ***"',
    ],
    [
      { image: 'i', mounts: ['../up'] },
      '--mount "../up" must be a relative path inside the workspace (e.g. docs or out:rw).',
    ],
  ] as [Omit<RegistrationInput, 'name'>, string][])(
    'refuses the flags %j as a usage error',
    (input, message) => {
      expect(refusal(() => plan(input))).toMatchObject({ code: 'REGISTRATION_USAGE', message });
    },
  );

  it('refuses a known token format in the command after --, on npm and image alike, never repeating it', () => {
    const GH = ['ghp_', 'Pos1tionalSecret0123456789abcdefAB'].join('');
    const JWT = [
      'eyJhbGciOiJIUzI1NiJ9',
      'eyJzdWIiOiIxMjM0In0',
      'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    ].join('.');
    const PEM = ['-----BEGIN EC PRIVATE KEY-----', 'MHcCAQEEIBkg', '-----END EC PRIVATE KEY-----'].join('\n');
    for (const [command, value] of [
      [['--token', GH], GH],
      [[`--token=${GH}`], GH],
      [['--stdio', JWT], JWT],
      [['--key', PEM], 'MHcCAQEEIBkg'],
    ] as const) {
      for (const source of [{ image: 'i' }, { npm: 'gh-mcp@1.0.0' }]) {
        const error = refusal(() => plan({ ...source, command }));
        expect(error.code).toBe('REGISTRATION_USAGE');
        expect(error.message).toMatch(
          /^Argument \d of the command after -- carries a credential \(it has the format of a/,
        );
        expect(error.message).toMatch(/ringfence secret set NAME .*-e VAR=@secret:NAME/);
        expect(error.message).not.toContain(value.slice(-10));
      }
    }
    // Ordinary arguments (and a person's own choices) are registered as given.
    expect(plan({ image: 'i', command: ['--port', '8080', '--token-file', '/run/t'] })).toMatchObject({
      draft: { command: ['--port', '8080', '--token-file', '/run/t'] },
    });
  });

  it("refuses a host or range the egress proxy would refuse, with the proxy's message and the flag", () => {
    const ip = refusal(() => plan({ image: 'i', egressAllow: ['10.0.0.1'] }));
    expect(ip.code).toBe('SERVER_EGRESS');
    expect(ip.message).toMatch(
      /^--egress-allow "10\.0\.0\.1" is refused: .*IP addresses cannot be allowed by name/,
    );
    const cidr = refusal(() =>
      plan({ image: 'i', egressAllow: ['api.example.com'], egressAllowAddress: ['999.1.1.1/99'] }),
    );
    expect(cidr.code).toBe('SERVER_EGRESS');
    expect(cidr.message).toMatch(
      /^--egress-allow-address "999\.1\.1\.1\/99" is refused: .*is not an address range/,
    );
    expect(refusal(() => plan({ image: 'i', egressAllow: ['api.example.com:99999'] })).code).toBe(
      'SERVER_EGRESS',
    );
  });

  it('refuses a bad name or a plain-http remote before anything else', () => {
    expect(refusal(() => plan({ name: 'Bad', image: 'i' })).code).toBe('SERVER_NAME');
    expect(refusal(() => plan({ url: 'http://mcp.example.com/mcp' })).code).toBe('SERVER_URL');
  });
});

describe('sampling and elicitation from the flags', () => {
  it('stores --allow-sampling and --allow-elicitation on either transport, and nothing without them', () => {
    const flags = { allowSampling: true, allowElicitation: true };
    const asks = { allow_sampling: true, allow_elicitation: true };
    const remote = plan({ url: 'https://mcp.example.com/mcp', ...flags });
    expect(remote.transport === 'http' && remote.server).toMatchObject(asks);
    const contained = plan({ image: 'example/server:1', allowSampling: true });
    expect(contained.transport === 'container' && contained.draft).toMatchObject({ allow_sampling: true });
    expect(contained.transport === 'container' && contained.draft).not.toHaveProperty('allow_elicitation');
    const none = plan({ url: 'https://mcp.example.com/mcp' });
    expect(none.transport === 'http' && none.server).not.toHaveProperty('allow_sampling');
    expect(
      parseServersFile({ version: 1, servers: [remote.transport === 'http' && remote.server] }).servers[0],
    ).toMatchObject(asks);
  });

  it('mcp-servers.json refuses a value that is not true or false', () => {
    for (const bad of ['yes', 1, null]) {
      const entry = { name: 'r', transport: 'http', url: 'https://mcp.example.com/mcp', allow_sampling: bad };
      expect(() => parseServersFile({ version: 1, servers: [entry] })).toThrow(
        expect.objectContaining({
          code: 'SERVER_FIELD',
          message: 'servers[0].allow_sampling must be true or false',
        }),
      );
    }
  });
});

describe('call limits from the flags', () => {
  it('stores --call-timeout, --call-ceiling and --max-result-mb on either transport', () => {
    const flags = { callTimeout: 120, callCeiling: 1800, maxResultMb: 12 };
    const limits = { timeouts: { call_seconds: 120, ceiling_seconds: 1800 }, max_result_mb: 12 };
    const remote = plan({ url: 'https://mcp.example.com/mcp', ...flags });
    expect(remote.transport === 'http' && remote.server).toMatchObject(limits);
    const contained = plan({ image: 'example/server:1', ...flags });
    expect(contained.transport === 'container' && contained.draft).toMatchObject(limits);
    const none = plan({ url: 'https://mcp.example.com/mcp' });
    expect(none.transport === 'http' && none.server).not.toHaveProperty('timeouts');
    expect(none.transport === 'http' && none.server).not.toHaveProperty('max_result_mb');
    const one = plan({ url: 'https://mcp.example.com/mcp', callCeiling: 3600 });
    expect(one.transport === 'http' && one.server.timeouts).toEqual({ ceiling_seconds: 3600 });
  });

  it.each([
    [{ callTimeout: 0 }, /^--call-timeout must be a whole number of seconds from 1 to 86400, got 0\.$/],
    [{ callCeiling: 100_000 }, /^--call-ceiling must be a whole number of seconds/],
    [{ callTimeout: 300, callCeiling: 60 }, /^--call-ceiling \(60 s\) is below --call-timeout \(300 s\)/],
    [{ maxResultMb: 64 }, /^--max-result-mb must be a whole number of MiB from 1 to 32, got 64\.$/],
  ])('refuses %j as a usage error naming the flag', (flags, message) => {
    const error = refusal(() => plan({ url: 'https://mcp.example.com/mcp', ...flags }));
    expect(error.code).toBe('REGISTRATION_USAGE');
    expect(error.message).toMatch(message);
  });
});

describe('flag parsers', () => {
  it('keeps everything after the first "=" as the value and refuses an empty key', () => {
    expect(parseKeyValues(['A=b=c', 'E='], '--env')).toEqual({ A: 'b=c', E: '' });
    expect(refusal(() => parseKeyValues(['=v'], '--header')).message).toBe(
      '--header expects KEY=VALUE, got "=***"',
    );
    expect(parseKeyValues(undefined, '--env')).toEqual({});
  });

  it('refuses absolute mounts and mounts that climb out', () => {
    for (const spec of ['/etc', 'a/../../b', ':rw', ''])
      expect(refusal(() => parseMounts([spec])).code).toBe('REGISTRATION_USAGE');
    expect(parseMounts(['a/b:rw'])).toEqual([{ path: 'a/b', mode: 'rw' }]);
  });
});

describe('review on first sight from the flags', () => {
  it('stores --review-first on either transport, nothing without it, and mcp-servers.json reads it back', () => {
    const remote = plan({ url: 'https://mcp.example.com/mcp', reviewFirst: true });
    expect(remote.transport === 'http' && remote.server).toMatchObject({ review_first: true });
    const contained = plan({ image: 'example/server:1', reviewFirst: true });
    expect(contained.transport === 'container' && contained.draft).toMatchObject({ review_first: true });
    const none = plan({ image: 'example/server:1' });
    expect(none.transport === 'container' && none.draft).not.toHaveProperty('review_first');
    expect(
      parseServersFile({ version: 1, servers: [remote.transport === 'http' && remote.server] }).servers[0],
    ).toMatchObject({ review_first: true });
  });

  it('mcp-servers.json refuses a review_first that is not true or false', () => {
    for (const bad of ['yes', 'true', 1, null, {}]) {
      const entry = { name: 'r', transport: 'http', url: 'https://mcp.example.com/mcp', review_first: bad };
      expect(() => parseServersFile({ version: 1, servers: [entry] })).toThrow(
        'servers[0].review_first must be true or false',
      );
    }
  });
});
