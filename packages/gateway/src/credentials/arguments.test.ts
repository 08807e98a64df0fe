// A credential never reaches a contained server in its argument list: the finder both import and
// registration use. Tokens are built so no whole one sits in this file.
import { describe, expect, it } from 'vitest';
import { findSecretArgument } from './arguments.js';

const GH = ['ghp_', 'Pos1tionalSecret0123456789abcdefAB'].join('');
const JWT = [
  'eyJhbGciOiJIUzI1NiJ9',
  'eyJzdWIiOiIxMjM0In0',
  'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
].join('.');
const PEM = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAx1y2', '-----END RSA PRIVATE KEY-----'].join(
  '\n',
);
const RANDOM = 'q7Vt2Lx9Rk4Wm8Zp3Nc6Yb1H';

describe('findSecretArgument', () => {
  it('finds a known format anywhere, at both depths, naming the class and never the value', () => {
    for (const depth of ['formats', 'full'] as const)
      for (const [command, index] of [
        [['--token', GH], 1],
        [[`--token=${GH}`], 0],
        [['--port', '8080', `--auth=Bearer ${JWT}`], 2],
        [['serve', PEM], 1],
        [[`https://x.example/?k=${GH}`], 0],
      ] as const) {
        const found = findSecretArgument(command, depth);
        expect(found, `${depth} ${command.join(' ').slice(0, 20)}`).toMatchObject({ index });
        expect(found!.why).toMatch(/has the format of a (github|jwt|private-key) key/);
        expect(found!.why).not.toContain(GH.slice(4));
      }
  });

  it('full: the value after a credential flag, a long random word, a URL carrying a secret', () => {
    const cases: [string[], number, RegExp][] = [
      [['--token', 'short-but-secret'], 1, /follows --token/],
      [['--api-key=plainpassword1'], 0, /value of --api-key/],
      [['--client-secret', '-dashFirst1'], 1, /follows --client-secret/],
      [['--auth', 'Bearer', 'abcdefgh12'], 2, /follows --auth/],
      [['--db', RANDOM], 1, /looks like a secret/],
      [['https://me:hunter22@db.example/x'], 0, /looks like a secret/],
    ];
    for (const [command, index, why] of cases) {
      const found = findSecretArgument(command, 'full');
      expect(found, command.join(' ')).toMatchObject({ index });
      expect(found!.why).toMatch(why);
      expect(found!.why).not.toContain(command[index]!.slice(-6));
      // Registration looks only for known formats.
      expect(findSecretArgument(command, 'formats')).toBeUndefined();
    }
  });

  it('lets ordinary arguments through', () => {
    for (const command of [
      ['--port', '8080'],
      ['--stdio', '--verbose', '--log-level', 'debug'],
      ['--token-file', '/run/secrets/token'],
      ['--token', '--port', '80'],
      ['/workspace/data', '--root=/workspace', 'server-filesystem'],
      ['--model', 'claude-3-5-sonnet-20241022'],
      ['--token='],
    ])
      expect(findSecretArgument(command, 'full'), command.join(' ')).toBeUndefined();
  });
});
