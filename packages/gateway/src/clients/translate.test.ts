import { describe, expect, it } from 'vitest';
import { describeEntry, ringfenceEntry } from './entries.js';
import { serverNameFor, translateEntry } from './translate.js';

const docker = (...args: string[]) => translateEntry({ command: 'docker', args: ['run', ...args] });

describe('translateEntry: docker run', () => {
  it('maps a bind mount onto the workspace rule only when it is one (REL → /workspace/REL)', () => {
    expect(
      docker(
        '-i',
        '--mount',
        'type=bind,src=./out,dst=/workspace/out',
        '-v',
        './docs:/workspace/docs:ro',
        'img:1',
      ),
    ).toMatchObject({ kind: 'register', input: { image: 'img:1', mounts: ['out:rw', 'docs'] } });
    const outside = docker(
      '-v',
      '/etc:/workspace/etc',
      '-v',
      './../up:/workspace/../up',
      '-v',
      'vol:/workspace/vol',
      'img:1',
    );
    expect(outside).toMatchObject({ kind: 'register', input: { image: 'img:1' } });
    expect(outside.kind === 'register' && outside.input.mounts).toBeFalsy();
    expect(docker('-v', './out:/workspace/out', 'img:1')).toMatchObject({ input: { mounts: ['out:rw'] } });
  });

  it('takes -e KEY from the entry env, and skips when the value is nowhere', () => {
    expect(
      translateEntry({ command: 'docker', args: ['run', '-e', 'TOKEN', 'img:1'], env: { TOKEN: 't' } }),
    ).toMatchObject({ kind: 'register', input: { env: ['TOKEN=t'] } });
    expect(docker('-e', 'TOKEN', 'img:1')).toMatchObject({
      kind: 'skip',
      reason: expect.stringContaining('-e TOKEN'),
    });
  });

  it('refuses --entrypoint and --env-file rather than running something else', () => {
    expect(docker('--entrypoint', 'sh', 'img:1').kind).toBe('skip');
    expect(docker('--env-file', '.env', 'img:1').kind).toBe('skip');
  });

  it('keeps the arguments after the image as the command', () => {
    expect(docker('--rm', 'img:1', '--mode', 'fast')).toMatchObject({
      input: { command: ['--mode', 'fast'] },
    });
  });
});

describe('translateEntry: npx and others', () => {
  it('refuses a package that is not from the registry (path, git, URL)', () => {
    for (const spec of ['./local', 'github:me/server', 'https://example.com/x.tgz']) {
      expect(translateEntry({ command: 'npx', args: ['-y', spec] }).kind).toBe('skip');
    }
  });
  it('recognises its own entries, and a disabled one is left alone', () => {
    const ours = ringfenceEntry('cursor', { command: '/n', args: ['/r.js'] }, '/h', 'x', {});
    expect(translateEntry(ours).kind).toBe('ringfence');
    expect(translateEntry({ command: 'npx', args: ['-y', 'pkg'], disabled: true }).kind).toBe('skip');
  });
});

describe('describeEntry never shows a secret value', () => {
  it('hides env and header values, flag values named like secrets, and a URL query', () => {
    const text = describeEntry({
      command: 'srv',
      args: ['--api-key', 'S1', '--token=S2', '-e', 'PLAIN=S3', '--header', 'X-Any: S4', 'Authorization:S5'],
      env: { A: 'S6' },
      headers: { B: 'S7' },
    });
    for (const secret of ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7']) expect(text).not.toContain(secret);
    expect(describeEntry({ url: 'https://u:S8@h.example/mcp?key=S9' })).toBe(
      'http https://***@h.example/mcp?key=***',
    );
  });

  it('redacts the entry type too: a config may put anything there', () => {
    const text = describeEntry({ url: 'https://h', type: 'https://u:hunter2Secret@h' });
    expect(text).not.toContain('hunter2Secret');
    expect(text).toBe('https://***@h/ https://h/');
  });

  it('hides --pat-style values, positional tokens and tokens in URLs among the arguments (issue 21.6)', () => {
    const secrets = {
      pat: 'patValue0001',
      positional: 'ghp_0123456789abcdefghijABCDEFGHIJ012345',
      random: 'q8Zr2LmV9xTb4NcW7yKd3HsF6gJp1',
      query: 'queryValue0002',
      userinfo: 'userinfoValue0003',
      fragment: 'fragmentValue0004',
    };
    const text = describeEntry({
      command: 'npx',
      args: [
        '-y',
        'some-mcp@1.0.0',
        '--pat',
        secrets.pat,
        secrets.positional,
        secrets.random,
        `https://me:${secrets.userinfo}@h.example/sse?token=${secrets.query}#access_token=${secrets.fragment}`,
      ],
    });
    for (const [where, secret] of Object.entries(secrets)) expect(text, where).not.toContain(secret);
    expect(text).toBe(
      'npx -y some-mcp@1.0.0 --pat *** *** *** https://***@h.example/sse?token=***#access_token=***',
    );
  });
});

describe('serverNameFor', () => {
  it('fits the name rule and never reuses a taken or reserved name', () => {
    expect(serverNameFor('Docs Search', new Set())).toBe('docs-search');
    expect(serverNameFor('docs', new Set(['docs', 'docs-2']))).toBe('docs-3');
    expect(serverNameFor('ringfence', new Set())).toBe('ringfence-2');
    expect(serverNameFor('日本', new Set())).toBe('server');
  });
});

describe('translateEntry: a credential in the arguments is refused, never carried into the command', () => {
  const GH = ['ghp_', 'Pos1tionalSecret0123456789abcdefAB'].join('');
  const JWT = [
    'eyJhbGciOiJIUzI1NiJ9',
    'eyJzdWIiOiIxMjM0In0',
    'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  ].join('.');
  const PEM = [
    '-----BEGIN OPENSSH PRIVATE KEY-----',
    'b3BlbnNzaC1rZXktdjE=',
    '-----END OPENSSH PRIVATE KEY-----',
  ].join('\n');
  const npx = (...rest: string[]) =>
    translateEntry({ command: 'npx', args: ['-y', 'gh-mcp@1.0.0', ...rest] });

  it('npx and docker run: --token VALUE, --token=VALUE, a JWT, a PEM block, a plain password after --password', () => {
    for (const [rest, value] of [
      [['--token', GH], GH],
      [[`--token=${GH}`], GH],
      [['--jwt-input', JWT], JWT],
      [['--key-pem', PEM], PEM],
      [['--password', 'hunter2hunter2'], 'hunter2hunter2'],
      [['--port', '8080', `--api-key=notaformat42`], 'notaformat42'],
    ] as const) {
      for (const translation of [npx(...rest), docker('img:1', ...rest)]) {
        expect(translation, rest[0]).toMatchObject({ kind: 'skip' });
        const reason = translation.kind === 'skip' ? translation.reason : '';
        expect(reason).toMatch(/^argument \d+ after the package or image carries a credential/);
        expect(reason).toMatch(/ringfence secret set NAME .*-e VAR=@secret:NAME/);
        expect(reason).not.toContain(value.slice(-8));
      }
    }
  });

  it('ordinary arguments still import', () => {
    expect(npx('--port', '8080', '--log-level', 'debug')).toMatchObject({
      kind: 'register',
      input: { npm: 'gh-mcp@1.0.0', command: ['--port', '8080', '--log-level', 'debug'] },
    });
    expect(docker('img:1', '--token-file', '/run/secrets/t')).toMatchObject({
      kind: 'register',
      input: { command: ['--token-file', '/run/secrets/t'] },
    });
  });
});
