// Issue 27: a credential stored with `ringfence secret set` reaches a contained server only as the
// one env variable its registration names, in the container's Env at start: never in its Cmd,
// Entrypoint or labels, never in mcp-servers.json, any other file of the home, any output or the
// audit log (searched byte for byte). Once through Debian's gnome-keyring on a private D-Bus
// session (the Secret Service), once with no Secret Service answering (the encrypted file).
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CredentialStore } from '@ringfence/gateway/credentials';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, cliBin, ringfence } from '../helpers/cli.js';
import { docker, probeImage, removeTestContainers, uniqueName } from '../helpers/containers.js';
import { startSessionKeyring } from '../helpers/keyring.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';

/** Every file under `dir`, its bytes. */
async function filesUnder(dir: string): Promise<{ path: string; bytes: Buffer }[]> {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile()) out.push({ path, bytes: await readFile(path) });
  }
  return out;
}

function suite(backend: 'secret-service' | 'encrypted-file') {
  const VALUE = `rf-e2e-${backend}-${uniqueName('v')}-Zq7Lm2Xv9Tb4Nc8W`;
  const session = uniqueName('cred').replace(/[^a-z0-9-]/g, '');
  const outputs: CliResult[] = [];
  let home: string;
  let env: Record<string, string>;
  let served: ServedClient | undefined;
  const run = async (args: string[], input?: string) => {
    const result = await ringfence(args, env, input);
    outputs.push(result);
    return result;
  };

  beforeAll(async () => {
    home = await freshHome();
    const bus =
      backend === 'secret-service'
        ? (await startSessionKeyring()).address
        : // A bus nobody answers on: the keyring is probed, does not answer, and the file is used.
          `unix:path=${join(home, '..', 'no-bus')}`;
    env = { RINGFENCE_HOME: home, DBUS_SESSION_BUS_ADDRESS: bus, RINGFENCE_CREDENTIALS: 'auto' };
  });

  afterAll(async () => {
    await served?.close();
    await removeTestContainers();
    await stopAll();
  });

  it(`secret set stores the value in the ${backend} and says so`, async () => {
    const label = backend === 'secret-service' ? 'OS keyring (Secret Service)' : 'credential-values.json';
    // The keyring may take a moment to claim its bus name after it starts.
    let set: CliResult | undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      set = await run(['secret', 'set', 'probe-cred', '--class', 'generic', '--bind', 'probe'], `${VALUE}\n`);
      if (set.code === 0 && set.stdout.includes(label)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(set!.code, set!.stderr).toBe(0);
    expect(set!.stdout).toContain(label);
    const ls = JSON.parse((await run(['secret', 'ls', '--json'])).stdout);
    expect(ls.backend.kind).toBe(backend);
    expect(ls.credentials).toEqual([{ name: 'probe-cred', class: 'generic', bound_to: ['probe'], backend }]);
    if (backend === 'encrypted-file') {
      expect(ls.backend.keyring_unavailable).toMatch(/no Secret Service answers/);
      expect((await stat(join(home, 'credential-values.key'))).mode & 0o777).toBe(0o600);
    } else {
      expect((await readdir(home)).filter((f) => f.startsWith('credential-values'))).toEqual([]);
    }
  });

  it('registration refuses it for a server it is not bound to, and for a server with no network', async () => {
    const image = await probeImage();
    const other = await run([
      'mcp',
      'add',
      'other',
      '--image',
      image,
      '--egress-allow',
      'api.example.com',
      '-e',
      'T=@secret:probe-cred',
    ]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('not bound to server "other"');
    expect(other.stderr).toContain('ringfence secret bind probe-cred --server other');
    expect((await run(['secret', 'bind', 'probe-cred', '--server', 'jailed'])).code).toBe(0);
    const jailed = await run(['mcp', 'add', 'jailed', '--image', image, '-e', 'T=@secret:probe-cred']);
    expect(jailed.code).not.toBe(0);
    expect(jailed.stderr).toMatch(/no network \(egress deny\).*nowhere legitimate to go/);
  });

  it('the contained server gets the value as that one env variable, and nothing else holds it', async () => {
    const image = await probeImage();
    const add = await run([
      'mcp',
      'add',
      'probe',
      '--image',
      image,
      '--egress-allow',
      'api.example.com',
      '-e',
      'PROBE_SECRET=@secret:probe-cred',
      '-e',
      'PLAIN=visible',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain('It gets variable PROBE_SECRET from credential probe-cred');
    served = await connectStdio(home, env, {}, { args: ['--session', session] });
    const listed = (await served.client.listTools()).tools.map((t) => t.name);
    expect(listed, served.stderr()).toContain('probe_probe');
    const result = await served.client.callTool({ name: 'probe_probe', arguments: {} });
    expect(result.isError, `${firstText(result)} ${served.stderr()}`).toBeFalsy();
    // The server saw the variable (its value may be redacted in the result by the ingress scan).
    expect(Object.keys(JSON.parse(firstText(result)).env)).toContain('PROBE_SECRET');

    const info = await docker.getContainer(`ringfence-mcp-probe-${session}`).inspect();
    const containerEnv = info.Config.Env ?? [];
    expect(containerEnv).toContain(`PROBE_SECRET=${VALUE}`);
    expect(containerEnv.filter((entry) => entry.includes(VALUE))).toEqual([`PROBE_SECRET=${VALUE}`]);
    expect(containerEnv).toContain('PLAIN=visible');
    const elsewhere = JSON.stringify({
      cmd: info.Config.Cmd,
      entrypoint: info.Config.Entrypoint,
      labels: info.Config.Labels,
      args: info.Args,
      path: info.Path,
      name: info.Name,
      hostConfig: info.HostConfig,
    });
    expect(elsewhere).not.toContain(VALUE);

    const servers = await readFile(join(home, 'mcp-servers.json'), 'utf8');
    expect(servers).toContain('"PROBE_SECRET": "@secret:probe-cred"');
    const servedStderr = served.stderr();
    await served.close();
    served = undefined;
    expect(servedStderr).not.toContain(VALUE);
    const needle = Buffer.from(VALUE);
    for (const file of await filesUnder(home)) expect(file.bytes.includes(needle), file.path).toBe(false);
    for (const output of outputs) expect(output.stdout + output.stderr).not.toContain(VALUE);
  });
}

describe('credentials through the OS keyring (gnome-keyring on a private D-Bus session)', () => {
  suite('secret-service');
});

describe('credentials in the encrypted file when no Secret Service answers', () => {
  suite('encrypted-file');
});

describe('secret set at a terminal', () => {
  it('prompts on the terminal, echoes nothing of what is typed, and stores exactly it', async () => {
    const home = await freshHome();
    const VALUE = `typed-${uniqueName('v')}-Xv9Tb4Nc8W`;
    const command = [
      process.execPath,
      cliBin,
      'secret',
      'set',
      'typed',
      '--class',
      'generic',
      '--bind',
      'probe',
    ]
      .map((part) => `'${part}'`)
      .join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, RINGFENCE_HOME: home, RINGFENCE_CREDENTIALS: 'file' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let typed = false;
    const received = (chunk: Buffer) => {
      chunks.push(chunk);
      // Typed once the prompt is up (raw mode is on by then), a character at a time, as a person does.
      if (!typed && Buffer.concat(chunks).toString().includes('not shown; Enter to finish')) {
        typed = true;
        void (async () => {
          for (const char of `${VALUE}\r`) {
            child.stdin.write(char);
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        })();
      }
    };
    child.stdout.on('data', received);
    child.stderr.on('data', received);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const bytes = Buffer.concat(chunks);
    expect(code, bytes.toString()).toBe(0);
    expect(bytes.toString()).toContain('Stored typed (class generic)');
    expect(bytes.includes(Buffer.from(VALUE))).toBe(false);
    // Not even a character of it: the terminal shows no echo, so no piece of the value appears.
    expect(bytes.includes(Buffer.from(VALUE.slice(0, 8)))).toBe(false);
    expect(await new CredentialStore(home, 'file').value('typed')).toBe(VALUE);
  });
});
