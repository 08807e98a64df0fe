import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { probeImage, removeTestContainers } from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

// The probe server's `answerBytes` filler (test/fixtures/probe-server.mjs).
const filler = (n: number) =>
  Buffer.alloc(n, 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXY').toString('latin1');
const MIB = 1024 * 1024;

// Answers through the real attach stream: Docker frames the container's stdout and stderr
// together, in pieces of its own choosing; the gateway splits them and frames lines itself.
describe('contained answers through the attach stream', () => {
  let home: string;
  let served: ServedClient;

  beforeAll(async () => {
    home = await freshHome();
    const added = await ringfence(['mcp', 'add', 'big', '--image', await probeImage()], {
      RINGFENCE_HOME: home,
    });
    expect(added.code, added.stderr).toBe(0);
    served = await connectStdio(home);
  });

  afterAll(async () => {
    await served?.close().catch(() => {});
    await removeTestContainers();
  });

  it('answers of MiBs, several at once, come back whole while the server writes to stderr', async () => {
    const sizes = [3 * MIB, MIB + 1, 200_001];
    const results = await Promise.all(
      sizes.map((answerBytes) =>
        served.client.callTool({ name: 'big_probe', arguments: { answerBytes, stderrBytes: 300_000 } }),
      ),
    );
    for (const [index, result] of results.entries()) {
      expect(result.isError, firstText(result).slice(0, 300)).toBeFalsy();
      const report = JSON.parse(firstText(result)) as { filler: string };
      expect(report.filler.length).toBe(sizes[index]);
      expect(report.filler === filler(sizes[index]!)).toBe(true);
    }
  });

  it('an answer over the cap fails that call only; the server is kept and its stderr tail too', async () => {
    const [huge, small] = await Promise.all([
      served.client.callTool({ name: 'big_probe', arguments: { answerBytes: 17 * MIB, stderrBytes: 9000 } }),
      served.client.callTool({ name: 'big_probe', arguments: { answerBytes: 1000 } }),
    ]);
    expect(huge.isError).toBe(true);
    expect(firstText(huge)).toMatch(
      /big\/probe failed upstream: .*answer exceeded 16777216 bytes; it was dropped \(the server is kept\)/,
    );
    expect(JSON.parse(firstText(small)).filler).toBe(filler(1000));
    const after = await served.client.callTool({ name: 'big_probe', arguments: { answerBytes: 10 } });
    expect(JSON.parse(firstText(after)).filler).toBe(filler(10));

    await served.close();
    // Written when the server is stopped: the last 8 KiB of its stderr, none of its stdout.
    const path = join(home, 'logs', 'big.stderr');
    let tail = '';
    for (let i = 0; i < 100 && !tail; i++) {
      tail = await readFile(path, 'utf8').catch(() => '');
      if (!tail) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(tail).toMatch(/\ne{807}\n$/);
    expect(tail).not.toContain('abcdefghij');
  });
});
