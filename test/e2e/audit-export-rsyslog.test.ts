// The audit export against Debian's rsyslogd (imtcp, octet-counted RFC 5424; omfile writing each
// message's MSG as one line): `mcp serve` streams its log as it writes, through real calls; the
// gateway is killed with SIGKILL mid-stream and rsyslogd restarted mid-stream, and still every
// entry arrives, in order, at least once (resends after a lost connection are counted and are
// byte-identical); a local log rewritten from scratch is then caught by `audit verify --against`
// rsyslog's own output file. TLS: rsyslogd's gtls driver with a CA made here.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ringfence, unwrap } from '../helpers/cli.js';
import { connectStdio, freePort, freshHome, startToolServer } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';
import { ensureRsyslog, PrivateRsyslog, received } from '../helpers/rsyslog.js';

beforeAll(() => ensureRsyslog());
afterAll(stopAll);

const localSeqs = async (home: string) =>
  (await readFile(join(home, 'audit.jsonl'), 'utf8')).split('\n').filter(Boolean).length;

async function waitFor(what: string, check: () => Promise<boolean>, ms = 30_000) {
  for (let waited = 0; waited < ms; waited += 100) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function toolServer(dir: string) {
  const tools = join(dir, 'tools.json');
  const behaviours = join(dir, 'behaviours.json');
  await writeFile(
    tools,
    JSON.stringify([
      {
        name: 'echo',
        description: 'Echoes.',
        inputSchema: { type: 'object', properties: { i: { type: 'number' } } },
      },
    ]),
  );
  await writeFile(behaviours, JSON.stringify({ echo: { echo: true } }));
  return startToolServer(tools, behaviours);
}

it("every entry arrives, in order, across a gateway SIGKILL and an rsyslogd restart; a rewrite is caught against rsyslog's file", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rf-export-e2e-'));
  const server = await toolServer(dir);
  const home = await freshHome();
  expect((await ringfence(['mcp', 'add', 'up', '--url', server.url], { RINGFENCE_HOME: home })).code).toBe(0);
  const port = await freePort();
  const rsyslog = new PrivateRsyslog(join(dir, 'rsyslog'), port, join(dir, 'received.log'));
  await rsyslog.start();
  await writeFile(
    join(home, 'audit-export.json'),
    JSON.stringify({ sinks: [{ to: `syslog+tcp://127.0.0.1:${port}`, anchor_interval: 1 }] }),
  );

  // Gateway 1: calls stream out as they are written; killed with SIGKILL while calls are running.
  const first = await connectStdio(home);
  for (let i = 0; i < 15; i++) await first.client.callTool({ name: 'up_echo', arguments: { i } });
  // Entries count as delivered once the connection stayed up 2 s after them: wait for that, so
  // what the kill leaves unacknowledged is only the burst below.
  const settled = await localSeqs(home);
  await waitFor('the position to catch up', async () => (await position(home)) >= settled);
  const burst = Array.from({ length: 10 }, (_, i) =>
    first.client.callTool({ name: 'up_echo', arguments: { i: 100 + i } }).catch(() => 'cut off'),
  );
  await waitFor(
    'some of the burst to be exported',
    async () => Math.max(...received(await rsyslog.lines()).seqs) > settled + 4,
  );
  process.kill((first.client.transport as StdioClientTransport).pid!, 'SIGKILL');
  await Promise.all(burst);
  const atKill = await position(home);
  expect(atKill).toBeGreaterThanOrEqual(settled);

  // Gateway 2 resumes from the position in the home; rsyslogd is restarted in the middle.
  const second = await connectStdio(home);
  for (let i = 0; i < 10; i++) await second.client.callTool({ name: 'up_echo', arguments: { i: 200 + i } });
  // rsyslogd stopped and started again while calls keep coming (no pause for the export to
  // catch up): what was on the wire unacknowledged, or written while it was down, is sent again.
  let calling = true;
  const calls = (async () => {
    for (let i = 0; calling; i++)
      await second.client.callTool({ name: 'up_echo', arguments: { i: 500 + i } });
  })();
  await new Promise((r) => setTimeout(r, 700));
  await rsyslog.stop();
  await new Promise((r) => setTimeout(r, 700));
  await rsyslog.start();
  await new Promise((r) => setTimeout(r, 1_000));
  calling = false;
  await calls;
  // Closing the gateway stops following once what was written has gone out, with a last anchor.
  await second.close();
  const total = await localSeqs(home);
  await waitFor(
    'every entry to arrive',
    async () => new Set(received(await rsyslog.lines()).seqs).size >= total,
    20_000,
  );
  await rsyslog.stop();

  const { seqs, anchors } = received(await rsyslog.lines());
  const firstSeen = seqs.filter((seq, i) => seqs.indexOf(seq) === i);
  expect(firstSeen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  // At least once: what came twice is what was on the wire when a connection was lost or the
  // gateway was killed before it counted as delivered; each resend is byte-identical (checked by
  // verify --against below: two different lines for one seq would be a conflict).
  const duplicates = seqs.length - firstSeen.length;
  // The resends: the burst was on the wire but not yet acknowledged when the gateway was killed,
  // so the next gateway sends it again from the first unacknowledged entry; nothing acknowledged
  // is sent twice.
  const restarts = seqs.flatMap((seq, i) => (i > 0 && seq <= seqs[i - 1]! ? [seq] : []));
  expect(restarts[0]).toBe(atKill + 1);
  expect(restarts.every((seq) => seq > settled)).toBe(true);
  console.log(
    `audit export e2e: ${total} entries, ${duplicates} duplicates (resends from seq ${restarts.join(', ')}), ${anchors.length} anchors`,
  );
  expect(duplicates).toBeLessThan(total);
  expect(anchors.at(-1)?.seq).toBe(total);

  const ok = await ringfence(['audit', 'verify', '--against', rsyslog.output, '--json'], {
    RINGFENCE_HOME: home,
  });
  expect(ok.code).toBe(0);
  expect(JSON.parse(ok.stdout)).toMatchObject({
    ok: true,
    entries: total,
    exported: total,
    duplicates,
    coveredThrough: total,
  });

  // The whole local log rewritten from scratch: same lines, one verdict changed, every prev
  // recomputed, same length. `audit verify` alone cannot tell; against the export it fails.
  const log = join(home, 'audit.jsonl');
  const original = await readFile(log, 'utf8');
  const forged = rechain(original, (entry) => {
    if (entry.seq === 5) entry.ts = entry.ts.replace(/\.\d{3}Z$/, '.999Z');
  });
  expect(forged.length).toBe(original.length);
  await writeFile(log, forged);
  expect((await ringfence(['audit', 'verify'], { RINGFENCE_HOME: home })).code).toBe(0);
  const caught = await ringfence(['audit', 'verify', '--against', rsyslog.output], { RINGFENCE_HOME: home });
  expect(caught.code).toBe(1);
  expect(unwrap(caught.stdout)).toMatch(
    /local entry seq 5 is not the one that left the machine.*AGAINST_REWRITTEN/s,
  );
  const fromScratch = rechain(original, (entry) => {
    if (entry.seq === 1) entry.ts = entry.ts.replace(/\.\d{3}Z$/, '.999Z');
  });
  await writeFile(log, fromScratch);
  const scratch = await ringfence(['audit', 'verify', '--against', rsyslog.output, '--json'], {
    RINGFENCE_HOME: home,
  });
  expect(JSON.parse(scratch.stdout)).toMatchObject({ ok: false, code: 'AGAINST_OTHER_LOG' });
  // Cut back to a line boundary: the export holds later seqs than the local log.
  await writeFile(
    log,
    original
      .split('\n')
      .slice(0, total - 3)
      .join('\n') + '\n',
  );
  const cut = await ringfence(['audit', 'verify', '--against', rsyslog.output, '--json'], {
    RINGFENCE_HOME: home,
  });
  expect(JSON.parse(cut.stdout)).toMatchObject({ ok: false, code: 'AGAINST_TRUNCATED' });
});

/** The seq the export position file in the home says was acknowledged (0 before any). */
async function position(home: string): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  const file = (await readdir(home)).find((name) => /^audit-export-[0-9a-f]{12}\.json$/.test(name));
  if (!file) return 0;
  return JSON.parse(await readFile(join(home, file), 'utf8').catch(() => '{"seq":0}')).seq;
}

/** Re-serialises and re-chains every line after `change`: what someone rewriting the file does. */
function rechain(text: string, change: (entry: { seq: number; ts: string; prev: string }) => void): string {
  let prev = `sha256:${'0'.repeat(64)}`;
  const out: string[] = [];
  for (const line of text.split('\n').filter(Boolean)) {
    const entry = JSON.parse(line);
    change(entry);
    entry.prev = prev;
    const rewritten = JSON.stringify(entry);
    prev = `sha256:${createHash('sha256').update(rewritten).digest('hex')}`;
    out.push(rewritten);
  }
  return `${out.join('\n')}\n`;
}

it("over TLS to rsyslogd's gtls driver: delivered with the CA given, refused against another CA", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rf-export-tls-'));
  const pki = (name: string) => join(dir, name);
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test CA',
    '-keyout',
    pki('ca.key'),
    '-out',
    pki('ca.pem'),
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    pki('server.key'),
    '-out',
    pki('server.csr'),
  );
  await writeFile(pki('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    pki('server.csr'),
    '-CA',
    pki('ca.pem'),
    '-CAkey',
    pki('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    pki('ext.cnf'),
    '-out',
    pki('server.pem'),
  );
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=other CA',
    '-keyout',
    pki('other.key'),
    '-out',
    pki('other.pem'),
  );

  const server = await toolServer(dir);
  const home = await freshHome();
  expect((await ringfence(['mcp', 'add', 'up', '--url', server.url], { RINGFENCE_HOME: home })).code).toBe(0);
  const served = await connectStdio(home);
  for (let i = 0; i < 5; i++) await served.client.callTool({ name: 'up_echo', arguments: { i } });
  await served.close();
  const total = await localSeqs(home);

  const port = await freePort();
  const rsyslog = new PrivateRsyslog(join(dir, 'rsyslog'), port, join(dir, 'received.log'), {
    ca: pki('ca.pem'),
    cert: pki('server.pem'),
    key: pki('server.key'),
  });
  await rsyslog.start();
  const to = `syslog+tls://127.0.0.1:${port}`;

  // Another CA: the collector is not trusted, nothing is sent (retried until stopped).
  const { spawn } = await import('node:child_process');
  const { cliBin } = await import('../helpers/cli.js');
  const refused = spawn(
    process.execPath,
    [cliBin, 'audit', 'export', '--to', to, '--ca', pki('other.pem'), '--id', 'wrong-ca'],
    { env: { ...process.env, RINGFENCE_HOME: home } },
  );
  let refusal = '';
  refused.stderr.on('data', (c: Buffer) => {
    refusal += c.toString();
  });
  await waitFor('the refusal', async () => /certificate/i.test(refusal), 20_000);
  refused.kill('SIGKILL');
  expect(refusal).toMatch(/Retrying with backoff/);
  expect(await rsyslog.lines()).toEqual([]);

  const sent = await ringfence(['audit', 'export', '--to', to, '--ca', pki('ca.pem'), '--format', 'ocsf'], {
    RINGFENCE_HOME: home,
  });
  expect(sent.code, sent.stderr).toBe(0);
  expect(sent.stdout).toMatch(new RegExp(`acknowledged through seq ${total}`));
  await rsyslog.stop();
  const events = (await rsyslog.lines()).map((line) => JSON.parse(line.slice(line.indexOf('{'))));
  expect(events.filter((e) => e.class_uid === 6003).map((e) => e.metadata.sequence)).toEqual(
    Array.from({ length: total }, (_, i) => i + 1),
  );
  expect(events.at(-1)).toMatchObject({ type: 'ringfence.anchor', seq: total });
  const ok = await ringfence(['audit', 'verify', '--against', rsyslog.output, '--json'], {
    RINGFENCE_HOME: home,
  });
  expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, exported: total });
});
