import { afterEach, describe, expect, it } from 'vitest';
import { contentDigest } from '../audit/format.js';
import type { Caller } from '../ports/caller.js';
import {
  EverythingUpstream,
  everyReachDecided,
  type Line,
  policyOf,
  startGateway,
} from './__fixtures__/methods-harness.js';

const tags = (ascii: string) =>
  Array.from(ascii, (c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
const decisions = (lines: Line[]) => lines.filter((l) => l.type === 'mcp.decision');
const verdicts = (lines: Line[]) =>
  decisions(lines).map((l) => [l.refs.method, l.refs.server, l.refs.tool, l.refs.allowed, l.refs.rule]);

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});
async function setup(rules: Parameters<typeof policyOf>[0] = [], extra: Parameters<typeof policyOf>[1] = {}) {
  const s = new EverythingUpstream('s');
  const t = new EverythingUpstream('t');
  const started = await startGateway([s, t], policyOf(rules, extra));
  cleanup = started.done;
  return { s, t, ...started };
}

describe('subscriptions are decided as reads of their URI, and audited', () => {
  it('refuses a subscription under a deny rule: audited, nothing sent, no update relayed', async () => {
    const { s, gateway, lines, verify } = await setup([
      {
        id: 'no-secrets',
        match: { server: 's' },
        when: [{ arg: '/uri', glob: 'secret://*' }],
        action: 'deny',
        reason: 'secrets stay put',
      },
    ]);
    const updates: string[] = [];
    gateway.on('resourceUpdated', (uri) => updates.push(uri));
    await expect(gateway.subscribe('ringfence:s/secret://y', true, { agent: 'bot' })).rejects.toThrow(
      'ringfence refused the subscription to s/resource secret://y: secrets stay put (policy rule "no-secrets"). If it should be allowed, ask your policy admin (`ringfence doctor` names the policy in force).',
    );
    s.sendResourceUpdated('secret://y');
    expect(updates).toEqual([]);
    expect(s.reached).toEqual([]);
    const written = await lines();
    expect(written).toMatchObject([
      {
        type: 'mcp.decision',
        agent: 'bot',
        refs: {
          phase: 'call',
          server: 's',
          tool: 'secret://y',
          kind: 'resource',
          method: 'resources/subscribe',
          allowed: false,
          rule: 'no-secrets',
          arguments: contentDigest({ uri: 'secret://y' }),
        },
      },
    ]);
    expect(await verify()).toMatchObject({ ok: true });
  });

  it('forwards an allowed subscribe and the last unsubscribe, each with a decision and a result entry', async () => {
    const { s, gateway, lines, verify } = await setup();
    const updates: string[] = [];
    gateway.on('resourceUpdated', (uri) => updates.push(uri));
    await gateway.subscribe('ringfence:s/test://x', true, { agent: 'a' });
    await gateway.subscribe('ringfence:s/test://x', true, { agent: 'b' });
    s.sendResourceUpdated('test://x');
    await gateway.subscribe('ringfence:s/test://x', false, { agent: 'a' });
    await gateway.subscribe('ringfence:s/test://x', false, { agent: 'b' });
    s.sendResourceUpdated('test://x');
    expect(updates).toEqual(['ringfence:s/test://x']);
    expect(s.reached.map((r) => r.method)).toEqual([
      'resources/subscribe',
      'resources/subscribe',
      'resources/unsubscribe',
    ]);
    const written = await lines();
    expect(verdicts(written)).toEqual([
      ['resources/subscribe', 's', 'test://x', true, 'default_action'],
      ['resources/subscribe', 's', 'test://x', true, 'default_action'],
      ['resources/unsubscribe', 's', 'test://x', true, 'default_action'],
    ]);
    expect(written.filter((l) => l.type === 'mcp.result').map((l) => l.refs.result)).toEqual(
      Array(3).fill(contentDigest({})),
    );
    everyReachDecided(written, [s]);
    expect(await verify()).toMatchObject({ ok: true, interrupted: [] });
  });

  it('refuses a URI holding invisible characters under refuse_invisible_arguments (a template URI)', async () => {
    const { s, gateway, lines } = await setup([], { refuse_invisible_arguments: true });
    for (const uri of [
      `ringfence:s/test://t/a\u200Bb`,
      `ringfence:s/test://t/${tags('x')}`,
      'ringfence:s/test://t/1?page=\u0007',
    ])
      await expect(gateway.subscribe(uri, true), uri).rejects.toThrow(
        /hold \d+ invisible or control character\(s\).*refuse_invisible_arguments\) refuses such arguments; nothing was sent/,
      );
    expect(s.reached).toEqual([]);
    const written = await lines();
    expect(written).toHaveLength(3);
    expect(written.every((l) => l.refs.allowed === false && l.refs.method === 'resources/subscribe')).toBe(
      true,
    );
  });

  it('asks a person under an ask rule to subscribe, and ends the subscription without asking again', async () => {
    const { s, gateway, lines } = await setup([{ id: 'ask-s', match: { server: 's' }, action: 'ask' }]);
    const questions: string[] = [];
    const person = (answer: 'accept' | 'decline'): Caller => ({
      ask: async (question) => {
        questions.push(question);
        return answer;
      },
    });
    await expect(gateway.subscribe('ringfence:s/test://x', true, person('decline'))).rejects.toThrow(
      /did not approve it \(decline\)/,
    );
    await gateway.subscribe('ringfence:s/test://x', true, person('accept'));
    await gateway.subscribe('ringfence:s/test://x', false, person('decline'));
    expect(questions).toHaveLength(2);
    expect(questions[0]).toMatch(/^Allow the subscription to s\/resource test:\/\/x\? Arguments go to s/);
    expect(s.reached.map((r) => r.method)).toEqual(['resources/subscribe', 'resources/unsubscribe']);
    const written = await lines();
    expect(verdicts(written).map((v) => [v[0], v[3]])).toEqual([
      ['resources/subscribe', false],
      ['resources/subscribe', true],
      ['resources/unsubscribe', true],
    ]);
    expect(decisions(written)[2]?.refs.reason).toMatch(
      /not asked: it ends a subscription this session was allowed/,
    );
  });

  it('sends no unsubscribe for a URI nobody subscribed to, and writes nothing for it', async () => {
    const { s, gateway, lines } = await setup([{ id: 'no-s', match: { server: 's' }, action: 'deny' }]);
    await expect(gateway.subscribe('ringfence:s/test://x', true)).rejects.toThrow(/no-s/);
    await gateway.subscribe('ringfence:s/test://x', false);
    expect(s.reached).toEqual([]);
    expect(verdicts(await lines())).toEqual([['resources/subscribe', 's', 'test://x', false, 'no-s']]);
  });
});

describe('logging/setLevel is decided per server and audited', () => {
  it('tells a level only to servers its rules allow; a denied or ask-ruled server is not told, and each is audited', async () => {
    const { s, t, gateway, lines, logged, verify } = await setup([
      { id: 'quiet-s', match: { server: 's' }, action: 'deny', reason: 's is retired' },
      { id: 'ask-t', match: { server: 't' }, when: [{ arg: '/level', equals: 'debug' }], action: 'ask' },
    ]);
    await gateway.setLoggingLevel('debug', { agent: 'bot' });
    await gateway.setLoggingLevel('info', { agent: 'bot' });
    expect(s.reached).toEqual([]);
    expect(t.reached).toEqual([{ method: 'logging/setLevel', params: { level: 'info' } }]);
    expect(logged.filter((l) => l.includes('log level was not set'))).toHaveLength(3);
    const written = await lines();
    expect(verdicts(written).sort()).toEqual(
      [
        ['logging/setLevel', 's', 'debug', false, 'quiet-s'],
        ['logging/setLevel', 't', 'debug', false, 'ask-t'],
        ['logging/setLevel', 's', 'info', false, 'quiet-s'],
        ['logging/setLevel', 't', 'info', true, 'default_action'],
      ].sort(),
    );
    expect(decisions(written).every((l) => l.refs.kind === 'log-level' && l.agent === 'bot')).toBe(true);
    everyReachDecided(written, [s, t]);
    expect(await verify()).toMatchObject({ ok: true, interrupted: [] });
  });
});
