import { describe, expect, it } from 'vitest';
import type { AuditInput } from '../../audit/types.js';
import { fixedCredentials } from '../../credentials/registered.js';
import { SecretScanner } from '../../credentials/scan/scanner.js';
import { FakeUpstream } from '../../ports/__fixtures__/fake-upstream.js';
import { UpstreamError } from '../../ports/errors.js';
import { LOCAL_ONLY, type PolicyView } from '../../ports/policy.js';
import type { CallOptions } from '../../ports/upstream.js';
import type { CatalogEntry } from '../catalog.js';
import { runForward } from './index.js';
import { measureResult } from './result-size.js';
import type { ForwardedRequest, PipelineDeps } from './types.js';

const MIB = 1024 * 1024;
const entry: CatalogEntry = {
  kind: 'tool',
  exposedName: 'art_draw',
  server: 'art',
  tool: 'draw',
  digest: `sha256:${'a'.repeat(64)}`,
  presented: {},
  inputSchema: { type: 'object' },
  outputSchema: undefined,
};

/** One forward through the pipeline with fakes: what the upstream got, and what was audited. */
function forward(
  callTool: (options: CallOptions) => Promise<unknown>,
  extra: {
    policy?: Partial<PolicyView>;
    signal?: AbortSignal;
    onProgress?: ForwardedRequest['onProgress'];
  } = {},
) {
  const written: { input: AuditInput; defer: boolean }[] = [];
  const seen: CallOptions[] = [];
  const upstream = new FakeUpstream('art', {
    destination: 'remote art.example',
    callTool: async (_name, _args, options = {}) => {
      seen.push(options);
      return callTool(options);
    },
    getPrompt: async () => {
      throw new Error('not offered');
    },
  });
  const deps: PipelineDeps = {
    policy: { ...LOCAL_ONLY, ...extra.policy },
    guard: {
      prepare: async () => ({ ok: true }),
      checkArguments: async () => ({ ok: true }),
      checkResult: async () => ({ ok: true }),
    },
    audit: {
      append: async (input, options) => {
        written.push({ input, defer: options?.defer === true });
        return written.length;
      },
    },
    policyRef: {},
    maxResultBytes: MIB,
    log: () => {},
    linkUri: (server: string, uri: string) => `ringfence:${server}/${uri}`,
    secrets: new SecretScanner(fixedCredentials([])),
  };
  const request: ForwardedRequest = {
    method: 'tools/call',
    entry,
    args: {},
    caller: {},
    upstream,
    unavailableReason: '',
    protocolVersion: undefined,
    ...(extra.signal ? { signal: extra.signal } : {}),
    ...(extra.onProgress ? { onProgress: extra.onProgress } : {}),
  };
  return { run: () => runForward(deps, request), written, seen };
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const refsOf = (w: { input: AuditInput } | undefined) =>
  (w?.input as { refs?: Record<string, unknown> } | undefined)?.refs;

describe('forwarding: cancel, progress and time', () => {
  it("hands the upstream the client's signal, its progress sink, the policy's cap and the pinned schema", async () => {
    const signal = new AbortController().signal;
    const onProgress = () => {};
    const f = forward(async () => ({ content: [] }), {
      signal,
      onProgress,
      policy: { maxCallSeconds: (server) => (server === 'art' ? 900 : undefined) },
    });
    await f.run();
    expect(f.seen[0]).toEqual({
      signal,
      onProgress,
      cap: { ms: 900_000, source: 'the organisation policy (mcp[].max_call_seconds for art)' },
      // The catalog entry's (pinned) schema: a 2026 upstream's Mcp-Param-* come from it only.
      inputSchema: entry.inputSchema,
    });
    const none = forward(async () => ({ content: [] }));
    await none.run();
    expect(none.seen[0]).toEqual({ inputSchema: entry.inputSchema });
  });

  it('a call the client cancelled is recorded as cancelled by the client', async () => {
    const f = forward(async () => {
      throw new UpstreamError('CALL_CANCELLED', 'the client cancelled the call');
    });
    const result = await f.run();
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'ringfence: the call to art/draw was cancelled by the client; the server was told to stop.',
    );
    expect(f.written[1]?.input.type).toBe('mcp.result');
    expect(refsOf(f.written[1])).toMatchObject({
      is_error: true,
      reason: 'cancelled by the client',
      cancelled: 'client',
    });
  });

  it.each([
    ['CALL_TIMEOUT', 'timed out without progress'],
    ['CALL_CEILING', 'reached the call ceiling'],
  ] as const)('a call ended by %s is recorded as cancelled by the timeout', async (code, reason) => {
    const f = forward(async () => {
      throw new UpstreamError(code, 'no answer and no progress from art for 60 s, so the call was cancelled');
    });
    const result = await f.run();
    expect(text(result)).toBe(
      'ringfence: art/draw timed out: no answer and no progress from art for 60 s, so the call was cancelled.',
    );
    expect(refsOf(f.written[1])).toMatchObject({ reason, cancelled: 'timeout' });
  });

  it('a 2026 server that runs a tool only as a task of the extension: refused, saying why and what to do', async () => {
    const f = forward(async () => {
      throw Object.assign(new Error('Missing required client capability'), {
        code: -32021,
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      });
    });
    const result = await f.run();
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /^ringfence: art\/draw could not run: .*tasks extension.*make tasks optional/,
    );
    expect(refsOf(f.written[1])).toMatchObject({
      reason: 'the server needs the tasks extension',
      is_error: true,
    });
  });

  it('a call lost with its server says so, points at the logs, and quotes the server only printably', async () => {
    const f = forward(async () => {
      throw new UpstreamError(
        'UPSTREAM_MALFORMED',
        'it sent a line that is not an event field ("\u001b[2Jx")',
      );
    });
    const result = await f.run();
    expect(text(result)).toMatch(/^ringfence: art\/draw failed: it sent a line that is not an event field/);
    expect(text(result)).toMatch(
      /Check that the server is up; its last output is shown by: ringfence mcp ls --logs$/,
    );
    expect(text(result)).not.toContain('\u001b');
    expect(refsOf(f.written[1])).toMatchObject({ reason: 'upstream answer stream malformed' });
    expect(refsOf(f.written[1])).not.toHaveProperty('cancelled');
  });

  it('a call cancelled before it was forwarded is refused and never reaches the server', async () => {
    const controller = new AbortController();
    controller.abort();
    const f = forward(async () => ({ content: [] }), { signal: controller.signal });
    const result = await f.run();
    expect(f.seen).toEqual([]);
    expect(text(result)).toMatch(
      /^ringfence refused art\/draw: the client cancelled the call before it was forwarded/,
    );
    expect(f.written).toHaveLength(1);
    expect(refsOf(f.written[0])).toMatchObject({ allowed: false, rule: 'cancelled' });
  });
});

describe('the result cap counts base64 content decoded', () => {
  const image = (bytes: number) => ({
    type: 'image',
    mimeType: 'image/png',
    // A PNG's signature, then filler: only an image whose bytes are its type passes (`media.ts`).
    data: Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(bytes - 8, 7)]).toString(
      'base64',
    ),
  });

  it('a 5 MiB image passes the default cap; a 7 MiB one is withheld saying what was counted', async () => {
    const five = forward(async () => ({ content: [image(5 * MIB)] }));
    const passed = await five.run();
    expect(passed.isError).toBeUndefined();
    expect((passed.content[0] as { data: string }).data.length).toBeGreaterThan(6.6 * MIB);

    const seven = forward(async () => ({ content: [image(7 * MIB)] }));
    const withheld = await seven.run();
    expect(withheld.isError).toBe(true);
    expect(text(withheld)).toMatch(
      /^ringfence withheld the result of art\/draw: the result counts 73400\d\d bytes \(7\.0 MiB\), over the 6291456 bytes \(6\.0 MiB\) cap for art \(counted: its JSON in UTF-8, with the base64 data of images, audio and embedded blobs at their decoded size\)/,
    );
  });

  it('counts images, audio and blobs decoded, and anything that is not strict base64 as it is', () => {
    const b64 = Buffer.alloc(3000, 1).toString('base64');
    const json = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
    for (const content of [
      [{ type: 'image', mimeType: 'image/png', data: b64 }],
      [{ type: 'audio', mimeType: 'audio/wav', data: b64 }],
      [{ type: 'resource', resource: { uri: 'x:y', blob: b64 } }],
    ]) {
      const result = { content };
      expect(measureResult(result)).toBe(json(result) - b64.length + 3000);
    }
    for (const data of [`${b64}!`, b64.slice(1), `${b64.slice(0, -4)}=AAA`]) {
      const result = { content: [{ type: 'image', mimeType: 'image/png', data }] };
      expect(measureResult(result)).toBe(json(result));
    }
    const textOnly = { content: [{ type: 'text', text: b64 }] };
    expect(measureResult(textOnly)).toBe(json(textOnly));
    expect(
      measureResult({
        content: [
          { type: 'image', data: 'QUJD' },
          { type: 'image', data: 'QQ==' },
        ],
      }),
    ).toBe(
      json({
        content: [
          { type: 'image', data: 'QUJD' },
          { type: 'image', data: 'QQ==' },
        ],
      }) -
        8 +
        3 +
        1,
    );
  });
});
