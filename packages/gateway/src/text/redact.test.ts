// The one redactor: each class of secret in each position it claims, words people write left
// alone, and a property test that puts random secrets in every position and finds none of them
// in what is shown.
import { describe, expect, it } from 'vitest';
import { REDACTED, redactArgs, redactImage, redactText, redactUrl, redactValue } from './redact.js';
import { hasTokenShape, isCredentialName, looksLikeSecretWord } from './secret-shapes.js';

/** A small seeded generator, so a failure names the case that failed and reruns the same. */
function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const HEX = '0123456789abcdef';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

describe('redactUrl', () => {
  it('hides userinfo, user and password alike', () => {
    expect(redactUrl('https://alice:hunter2hunter2@mcp.example.com/mcp')).toBe(
      'https://***@mcp.example.com/mcp',
    );
    expect(redactUrl('https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x')).toBe(
      'https://***@github.com/x',
    );
    // WHATWG URL reads up to the last @: a password with an @ in it is hidden whole.
    expect(redactUrl('https://u:p@ss@w0rd@host.example/')).toBe('https://***@host.example/');
    // Forms a client still connects to with the userinfo, and forms that do not parse at all.
    for (const url of [
      'https:\\\\u:pw0001@host.example/mcp',
      'https:/u:pw0001@host.example/mcp',
      'https:u:pw0001@host.example/mcp',
      'HTTPS://U:pw0001@HOST.EXAMPLE/mcp',
      'https://user:p?pw0001#x@host.example/mcp',
      'https://user:pw0001@[bad/mcp',
      'postgres://user:pw0001@db.example:5432/app',
      'admin:pw0001@engine.example:2375',
      'https://user:pa/pw0001@host.example/mcp',
      'https://user:/pw0001/x@host.example/mcp',
    ]) {
      const shown = redactUrl(url);
      expect(shown, url).not.toContain('pw0001');
      expect(shown, url).toContain('***@');
    }
  });

  it('hides credential-like query and fragment parameters by name, in any case', () => {
    for (const name of [
      'token',
      'access_token',
      'api_key',
      'apiKey',
      'APIKEY',
      'key',
      'secret',
      'client_secret',
      'password',
      'pass',
      'pwd',
      'auth',
      'Authorization',
      'sig',
      'signature',
      'X-Amz-Signature',
      'X-Amz-Credential',
      'X-Amz-Security-Token',
      'session',
      'code',
      'x-api-key',
      'private_token',
      'refresh_token',
      'id_token',
    ]) {
      const url = `https://mcp.example.com/mcp?mode=ro&${name}=s3cr3t-v4lue&x=1#${name}=fr4gm3nt-v4lue`;
      const shown = redactUrl(url);
      expect(shown, name).toBe(
        `https://mcp.example.com/mcp?mode=ro&${name}=${REDACTED}&x=1#${name}=${REDACTED}`,
      );
    }
  });

  it('hides a percent-encoded parameter name, and tokens in the path (webhooks, /bot<token>/)', () => {
    expect(redactUrl('https://h.example/?api%5Fkey=abc')).toBe(`https://h.example/?api%5Fkey=${REDACTED}`);
    expect(redactUrl('https://hooks.slack.com/services/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')).toBe(
      'https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/***',
    );
    expect(redactUrl('https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe')).toBe(
      'https://api.telegram.org/***/getMe',
    );
  });

  it('hides a parameter whose value carries a credential of its own', () => {
    expect(redactUrl('https://h.example/?dsn=postgres%3A%2F%2Fu%3Apw0001%40db%2Fapp&x=1')).toBe(
      `https://h.example/?dsn=${REDACTED}&x=1`,
    );
    expect(redactUrl('https://h.example/?h=Authorization%3A%20Bearer%20abcdef0001')).toBe(
      `https://h.example/?h=${REDACTED}`,
    );
  });

  it('keeps what carries no secret', () => {
    for (const url of [
      'https://unpkg.com/react@18/umd/react.js',
      'https://h.example:8443/pkg@1.2.3/x',
      'https://mcp.example.com/mcp',
      'http://127.0.0.1:8080/mcp?mode=read-only&limit=10',
      'https://api.githubcopilot.com/mcp/x/repos/readonly',
      'unix:///var/run/docker.sock',
      'tcp://10.0.0.5:2376',
    ])
      expect(redactUrl(url)).toBe(url);
  });
});

describe('redactArgs', () => {
  it('hides values after credential-like flags in both forms, and keeps the flags', () => {
    const flags = [
      '--token',
      '--pat',
      '--api-key',
      '--apiKey',
      '--password',
      '--secret',
      '--client-secret',
      '--key',
      '--auth',
      '--bearer',
      '--access-token',
      '--github-personal-access-token',
      '-token',
    ];
    for (const flag of flags) {
      expect(redactArgs(['server', flag, 'hunter2'])).toEqual(['server', flag, REDACTED]);
      expect(redactArgs(['server', `${flag}=hunter2`])).toEqual(['server', `${flag}=${REDACTED}`]);
    }
    // A credential flag followed by another flag takes no value.
    expect(redactArgs(['--auth', '--port', '80'])).toEqual(['--auth', '--port', '80']);
    // Where a secret is kept is not the secret.
    expect(redactArgs(['--token-file', '/run/secrets/t'])).toEqual(['--token-file', '/run/secrets/t']);
  });

  it('keeps names and hides values of env and header pairs', () => {
    expect(
      redactArgs([
        'run',
        '-e',
        'GITHUB_PERSONAL_ACCESS_TOKEN=abc',
        '--env=PLAIN=visible-but-a-value',
        '-H',
        'Authorization: Bearer abcdef',
        '--header',
        'X-Tenant:acme',
      ]),
    ).toEqual([
      'run',
      '-e',
      `GITHUB_PERSONAL_ACCESS_TOKEN=${REDACTED}`,
      `--env=PLAIN=${REDACTED}`,
      '-H',
      `Authorization: ${REDACTED}`,
      '--header',
      `X-Tenant: ${REDACTED}`,
    ]);
  });

  it('hides credential-named NAME=value, known token formats and long random positionals', () => {
    const shown = redactArgs([
      'API_KEY=abc',
      'githubToken=abc',
      'ghp_1234567890abcdefghijklmnopqrstuvwxyz',
      'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
      'sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345',
      'sk-proj-abcdefghijklmnop0123456789',
      'xoxb-1234567890-abcdefghijkl',
      'AKIAIOSFODNN7EXAMPLE',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      'Zk3xQ9vL2mN8pR4tW7yB1cD6fG0hJ5kA',
      '123e4567-e89b-12d3-a456-426614174000',
      'https://x:y@h.example/?token=t',
      'DATABASE_URL=postgres://user:pw@db.example/app',
    ]);
    expect(shown).toEqual([
      `API_KEY=${REDACTED}`,
      `githubToken=${REDACTED}`,
      REDACTED,
      REDACTED,
      REDACTED,
      REDACTED,
      REDACTED,
      REDACTED,
      REDACTED,
      REDACTED,
      REDACTED,
      REDACTED,
      `https://***@h.example/?token=${REDACTED}`,
      'DATABASE_URL=postgres://***@db.example/app',
    ]);
  });

  it('redacts a path segment by segment, keeping the words', () => {
    expect(redactArgs(['/nix/store/9f86d081884c7d659a2feaa0c55ad015-nodejs-20/bin/npx', 'x'])).toEqual([
      '/nix/store/***/bin/npx',
      'x',
    ]);
  });

  it('keeps the arguments people write', () => {
    const args = [
      '-y',
      '@modelcontextprotocol/server-filesystem@2025.1.14',
      '/Users/me/Desktop',
      '~/projects/my-very-long-project-name',
      '--db-path',
      './data/test.db',
      'ghcr.io/github/github-mcp-server:v0.4.0',
      'claude-3-5-sonnet-20241022',
      'gpt-4o-mini-2024-07-18',
      'MyVeryLongServerName',
      'read-only-mode-enabled-for-all',
      'arn:aws:iam::123456789012:role/MyRole',
      'x86_64-unknown-linux-gnu',
      '--port',
      '8080',
      '-p',
      '3000',
      '--session',
      'console-abc',
      'stdio',
    ];
    expect(redactArgs(args)).toEqual(args);
  });
});

describe('redactText', () => {
  it('redacts URLs, pairs, flags and bearer values inside messages, and keeps placeholders', () => {
    expect(redactText('cannot connect to https://h.example/mcp?api_key=abc123: ECONNREFUSED.')).toBe(
      `cannot connect to https://h.example/mcp?api_key=${REDACTED}: ECONNREFUSED.`,
    );
    expect(redactText('Unexpected argument: --token=abc and password: hunter2, "secret": "x1"')).toBe(
      `Unexpected argument: --token=${REDACTED} and password: ${REDACTED}, "secret": ${REDACTED}`,
    );
    expect(redactText('sent Authorization: Bearer abc.def.ghi')).toBe(
      `sent Authorization: Bearer ${REDACTED}`,
    );
    expect(redactText('no engine at admin:pw0001@engine.example:2375 (refused)')).toBe(
      `no engine at ${REDACTED}@engine.example:2375 (refused)`,
    );
    for (const kept of ['clone git@github.com:org/repo.git', 'mail me@example.com', 'at 10:30 today'])
      expect(redactText(kept)).toBe(kept);
    expect(redactText('key ghp_1234567890abcdefghijklmnopqrstuvwxyz leaked')).toBe(`key ${REDACTED} leaked`);
    expect(
      redactText('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz\n-----END OPENSSH PRIVATE KEY-----'),
    ).toBe(REDACTED);
    const advice =
      'Run: ringfence mcp add NAME --url URL --header "Authorization=Bearer …" (or --token TOKEN, -e KEY=VALUE); exit code: 1; ./keys/signing.key';
    expect(redactText(advice)).toBe(advice);
  });
});

describe('secrets in the shapes a review found missed (each holds hunter2Secret)', () => {
  const S = 'hunter2Secret';
  const args = (list: string[]) => redactArgs(['npx', 'srv', ...list]).join(' ');

  it('a value after a credential flag that starts with a dash is the value, not a flag', () => {
    expect(redactArgs(['--token', `-${S}`])).toEqual(['--token', REDACTED]);
    expect(redactArgs(['--password', `-x${S}`])).toEqual(['--password', REDACTED]);
    // A long flag (two dashes) after it is a flag: the credential flag had no value.
    expect(redactArgs(['--auth', '--port', '80'])).toEqual(['--auth', '--port', '80']);
    expect(redactArgs(['--token', `--token=${S}`])).toEqual(['--token', `--token=${REDACTED}`]);
    expect(redactText(`bad flag: --token -${S}`)).not.toContain(S);
  });

  it('a scheme-relative //user:password@host is a URL with credentials', () => {
    expect(redactArgs([`//u:${S}@h/x`])).toEqual([`//${REDACTED}@h/x`]);
    expect(redactArgs(['--url', `//u:${S}@h/x`])).toEqual(['--url', `//${REDACTED}@h/x`]);
    expect(redactText(`cannot reach //u:${S}@h/x now`)).toBe(`cannot reach //${REDACTED}@h/x now`);
    expect(redactValue('//server/share/file')).toBe('//server/share/file');
  });

  it('a JSON string value with escaped quotes is hidden whole', () => {
    const json = `{"token":"ab\\"${S}"}`;
    expect(redactText(json)).toBe(`{"token":${REDACTED}}`);
    expect(args([json])).not.toContain(S);
    expect(redactText(`{'password':'a\\'${S}'}`)).not.toContain(S);
  });

  it('after Authorization or Proxy-Authorization, the whole rest of the value is hidden', () => {
    for (const value of [`token ${S}`, `Token ${S}`, `Negotiate ${S}`, `ApiKey ${S}`, `Bearer: ${S}`, S]) {
      for (const header of ['Authorization', 'Proxy-Authorization', 'authorization']) {
        const line = `${header}: ${value}`;
        expect(redactText(`sent ${line}\nnext line`), line).not.toContain(S);
        expect(redactText(`sent ${line}\nnext line`), line).toContain('\nnext line');
        expect(args(['-H', line]), line).not.toContain(S);
        expect(redactText(`curl -H "${line}" https://h`), line).not.toContain(S);
      }
    }
    expect(redactText(`Authorization: token ${S}`)).toBe(`Authorization: token ${REDACTED}`);
  });

  it('a user:password pair after -u or --user is a credential', () => {
    expect(redactArgs(['--user', `admin:${S}`])).toEqual(['--user', `admin:${REDACTED}`]);
    expect(redactArgs(['-u', `admin:${S}`])).toEqual(['-u', `admin:${REDACTED}`]);
    expect(redactArgs([`--user=admin:${S}`])).toEqual([`--user=admin:${REDACTED}`]);
    expect(redactText(`curl -u admin:${S} https://h/x`)).toBe(`curl -u admin:${REDACTED} https://h/x`);
    expect(redactText(`curl --user admin:${S} https://h`)).not.toContain(S);
    // A user name alone is no credential.
    expect(redactArgs(['-u', 'admin'])).toEqual(['-u', 'admin']);
  });

  it('a credential flag whose value is an auth scheme hides the scheme and the next word', () => {
    expect(redactArgs(['--auth', 'Bearer', S])).toEqual(['--auth', REDACTED, REDACTED]);
    expect(redactArgs(['--auth', 'token', S, '--port', '1'])).toEqual([
      '--auth',
      REDACTED,
      REDACTED,
      '--port',
      '1',
    ]);
    expect(redactText(`ran with --auth Bearer ${S}`)).not.toContain(S);
  });

  it('a YAML value on the line after its name', () => {
    expect(redactText(`token:\n  ${S}\nother: 1`)).toBe(`token:\n  ${REDACTED}\nother: 1`);
    expect(redactText(`env:\n  password:\n    ${S}`)).not.toContain(S);
    // A nested mapping under a credential-like name is not read as its value.
    expect(redactText('auth:\n  type: oauth')).toBe('auth:\n  type: oauth');
  });

  it('credential-named pairs of a Cookie header', () => {
    expect(redactText(`sent Cookie: a=1; session=${S}`)).not.toContain(S);
    expect(redactText(`sent Cookie: a=1; session=${S}`)).toContain('session=***');
    expect(redactText(`Set-Cookie: sid=${S}; Path=/`)).not.toContain(S);
    expect(args(['-H', `Cookie: a=1; session=${S}`])).not.toContain(S);
  });
});

describe('what counts as a credential name or a random word', () => {
  it('names', () => {
    for (const name of [
      'GITHUB_TOKEN',
      'apiKey',
      'x-api-key',
      'DB_PASSWORD',
      'clientSecret',
      'AUTH',
      'accesstoken',
    ])
      expect(isCredentialName(name), name).toBe(true);
    for (const name of ['monkey', 'author', 'HOME', 'PATH', 'port', 'keyboard', 'token-file', 'mode'])
      expect(isCredentialName(name), name).toBe(false);
  });

  it('words', () => {
    expect(looksLikeSecretWord('abcdefghijklmnopqrstuvwxyz')).toBe(false);
    expect(looksLikeSecretWord('aaaaaaaaaa1111111111bbbb')).toBe(false);
    expect(looksLikeSecretWord('f3a9c2e1b7d4f6a8c0e2b4d6')).toBe(true);
  });
});

describe('no secret survives, wherever it is put (seeded property test)', () => {
  const random = prng(0x5ec2e7);
  const pick = (alphabet: string, length: number) =>
    Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const secrets = () => [
    pick(HEX, 32 + Math.floor(random() * 33)),
    pick(B64, 32 + Math.floor(random() * 33)),
    pick(ALNUM, 40),
    // Standard base64 (with + and /), sometimes starting with a slash like a path.
    `${random() < 0.3 ? '/' : ''}${pick(`${ALNUM}+/`, 43)}=`,
    `ghp_${pick(ALNUM, 36)}`,
    `github_pat_${pick(ALNUM, 22)}_${pick(ALNUM, 59)}`,
    `sk-ant-api03-${pick(B64, 40)}`,
    `xoxb-${pick('0123456789', 12)}-${pick(ALNUM, 24)}`,
    `AKIA${pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`,
    `eyJ${pick(B64, 20)}.eyJ${pick(B64, 30)}.${pick(B64, 43)}`,
  ];
  /** A short secret: only a credential's position can tell it is one. */
  const shortSecret = () => `${pick('abcdefghijklmnopqrstuvwxyz', 4)}${pick(ALNUM, 6)}`;

  it('in URLs: userinfo, credential parameters, fragments, and any value or path segment', () => {
    for (let round = 0; round < 60; round++) {
      for (const s of [...secrets(), shortSecret()]) {
        const named = [
          `https://user:${s}@h.example/mcp`,
          `https://${s}@h.example/mcp`,
          `https://h.example/mcp?token=${s}`,
          `https://h.example/mcp?a=1&API_KEY=${encodeURIComponent(s)}&b=2`,
          `https://h.example/mcp#access_token=${s}&state=x`,
          `http://127.0.0.1:9/mcp;jsessionid=1?X-Amz-Signature=${s}`,
        ];
        for (const url of named) expect(redactUrl(url), url).not.toContain(s);
        if (s.length >= 32) {
          // A token holding a slash, in a path, is several segments there, each judged alone.
          const inPath = s.includes('/') ? [] : [`https://h.example/hooks/${s}/x`];
          for (const url of [...inPath, `https://h.example/?q=${s}`, `https://h.example/#${s}`])
            expect(redactUrl(url), url).not.toContain(s);
        }
      }
    }
  });

  it('in argument lists: after a credential flag, in env and header pairs, NAME=value, and alone', () => {
    for (let round = 0; round < 60; round++) {
      for (const s of [...secrets(), shortSecret()]) {
        const placed: string[][] = [
          ['--token', s],
          [`--api-key=${s}`],
          ['--pat', s, '--verbose'],
          ['-e', `ANYTHING=${s}`],
          [`--env=ANY=${s}`],
          ['-H', `Authorization: Bearer ${s}`],
          ['--header', `X-Custom:${s}`],
          [`SLACK_BOT_TOKEN=${s}`],
          [`https://h.example/mcp?key=${s}`],
        ];
        placed.push(
          ['--token', `-${s}`],
          ['--user', `admin:${s}`],
          ['-u', `admin:${s}`],
          ['--auth', 'Bearer', s],
          ['-H', `Proxy-Authorization: Negotiate ${s}`],
          [`{"token":"ab\\"${s}"}`],
        );
        if (!s.includes('/')) placed.push([`//u:${s}@h.example/x`], ['--url', `//u:${s}@h.example/x`]);
        if (s.length >= 32) placed.push([s], ['serve', s, '--port', '1'], [`CONFIG=${s}`]);
        for (const args of placed) {
          const shown = redactArgs(['npx', '-y', 'some-server@1.0.0', ...args]).join(' ');
          expect(shown, args.join(' ')).not.toContain(s);
        }
      }
    }
  });

  it('in messages: URLs, name=value, --flag value and bearer values', () => {
    for (let round = 0; round < 60; round++) {
      for (const s of [...secrets(), shortSecret()]) {
        for (const message of [
          `cannot connect to https://h.example/mcp?token=${s}: refused`,
          `cannot connect to https://u:${s}@h.example/mcp.`,
          `Unexpected argument: --password=${s}`,
          `Nonexistent flag: --client-secret ${s}`,
          `request failed (Authorization: Bearer ${s})`,
          `{"api_key": "${s}"}`,
          `GITHUB_TOKEN=${s} is not valid`,
          `no engine answers at admin:${s}@engine.example:2375`,
          `sent Authorization: token ${s}\nthen`,
          `sent Proxy-Authorization: ApiKey ${s}`,
          `curl -H "Authorization: Negotiate ${s}" https://h.example`,
          `sent Cookie: a=1; session=${s}; b=2`,
          `token:\n  ${s}\nother: 1`,
          `{"token":"ab\\"${s}"}`,
          `curl -u admin:${s} https://h.example`,
          `bad flag: --password -${s}`,
          ...(s.includes('/') ? [] : [`cannot reach //u:${s}@h.example/x`]),
        ])
          expect(redactText(message), message).not.toContain(s);
        // In running text only a known format marks a word as a secret on its own.
        if (hasTokenShape(s)) expect(redactText(`found ${s} in it`)).not.toContain(s);
      }
    }
  });
});

describe('redactImage', () => {
  it('shows a reference in the engine grammar as it is: its tags and digests are random by design', () => {
    for (const reference of [
      'ringfence/node-base:20.20.2-f7282ee1bb67f1c9',
      'ringfence-test/probe:3b2c9d0e1f4a5b6c7d8e9f0a1b2c3d4e',
      'registry.example.com:5000/team/img:1',
      `img@sha256:${'ab'.repeat(32)}`,
      'mcp/server_memory__x:latest',
    ])
      expect(redactImage(reference)).toBe(reference);
  });
  it('hides what the grammar has no place for, and a known token format in a tag', () => {
    for (const [reference, secret] of [
      ['u:hunter2Secret@registry.example.com/img:1', 'hunter2Secret'],
      ['https://u:hunter2Secret@registry.example.com/img', 'hunter2Secret'],
      [`img:ghp_${'a1B2c3D4e5'.repeat(4)}`, 'a1B2c3D4e5'],
    ] as const)
      expect(redactImage(reference)).not.toContain(secret);
  });
});
