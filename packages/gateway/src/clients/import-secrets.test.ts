// Issue 21.6: `client import` showed URL userinfo and query tokens, `--pat`-style values and
// positional tokens. Every secret of a hostile config, in every position an entry can hold one,
// is looked for in everything import shows: rows, reasons, notes, changes, progress lines, and
// the refusal of a registration that quotes what it refused.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../config/servers.js';
import { type ImportResult, importClient } from './import.js';

const S = {
  userinfo: 'uiSecretPw0001',
  query: 'qsSecret0002',
  fragment: 'frSecret0003',
  pat: 'patSecret0004',
  patEq: 'patEqSecret0005',
  positional: 'ghp_Pos1tionalSecret0123456789abcdefABCD',
  random: 'Zq7Lm2Xv9Tb4Nc8Wy3Kd6Hs1Fg5Jp0R',
  env: 'envSecret0006',
  dockerEnv: 'dockerEnvSecret0007',
  header: 'headerSecret0008',
  remoteQuery: 'remoteQuerySecret0009',
  remoteHeader: 'remoteHeaderSecret0010',
  npmUrl: 'npmUrlSecret0011',
  label: 'labelSecret0012',
  unknownFlag: 'unknownFlagSecret0013',
  refusedQuery: 'refusedQuerySecret0014',
  apiKeyArg: 'sk-proj-ApiKeyArgSecret0123456789',
};

const CONFIG = {
  mcpServers: {
    remote: {
      url: `https://me:${S.userinfo}@mcp.example.com/mcp?api_key=${S.query}#token=${S.fragment}`,
      headers: { Authorization: `Bearer ${S.header}` },
    },
    gh: {
      command: 'npx',
      args: [
        '-y',
        'gh-mcp@1.0.0',
        '--pat',
        S.pat,
        `--github-pat=${S.patEq}`,
        S.positional,
        S.random,
        S.apiKeyArg,
      ],
      env: { GITHUB_TOKEN: S.env },
    },
    docker: {
      command: 'docker',
      args: [
        'run',
        '-i',
        '-e',
        `API_TOKEN=${S.dockerEnv}`,
        '--label',
        `api_key=${S.label}`,
        `--some-token=${S.unknownFlag}`,
        'acme/mcp:1',
        S.positional,
      ],
    },
    bridged: {
      command: 'npx',
      args: [
        'mcp-remote',
        `https://r.example.com/mcp?token=${S.remoteQuery}`,
        '--header',
        `X-Api-Key:${S.remoteHeader}`,
      ],
    },
    tarball: { command: 'npx', args: ['-y', `https://u:${S.npmUrl}@registry.example.com/pkg.tgz`] },
    refused: { url: `https://refused.example.com/mcp?key=${S.refusedQuery}` },
  },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-import-secrets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('client import shows no secret', () => {
  for (const dryRun of [true, false]) {
    it(`in rows, reasons, notes, changes and progress (${dryRun ? 'dry run' : 'real run'})`, async () => {
      const path = join(dir, 'claude_desktop_config.json');
      await writeFile(path, JSON.stringify(CONFIG));
      const printed: string[] = [];
      const result = await importClient({
        kind: 'claude-desktop',
        path,
        home: '/home/me/.ringfence',
        launch: { command: '/usr/bin/node', args: ['/opt/ringfence/bin/run.js'] },
        dryRun,
        registered: [],
        register: async (input) => {
          // A refusal that quotes what it refused, as validateRemoteUrl and the engine do.
          if (input.url?.includes('refused.example.com'))
            throw new Error(`cannot connect to ${input.url}: refused`);
          return { name: input.name } as ServerConfig;
        },
        progress: (line) => printed.push(line),
        beforeWrite: (shown: ImportResult) => printed.push(JSON.stringify(shown)),
      });
      const everything = `${JSON.stringify(result)}\n${printed.join('\n')}`;
      for (const [where, secret] of Object.entries(S)) expect(everything, where).not.toContain(secret);
      // What is shown still says what each entry is.
      expect(everything).toContain('https://***@mcp.example.com/mcp?api_key=***#token=***');
      expect(everything).toContain('--pat ***');
      if (!dryRun)
        expect(result.rows.find((row) => row.entry === 'refused')?.reason).toBe(
          'cannot connect to https://refused.example.com/mcp?key=***: refused',
        );
    });
  }
});
