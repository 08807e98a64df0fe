import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { methodImage, removeTestContainers } from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';
import { stopAll } from '../helpers/processes.js';

/** ASCII hidden as Unicode TAG characters: invisible at a terminal, there for the server. */
const tags = (ascii: string) =>
  Array.from(ascii, (c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');

interface Line {
  type: string;
  seq: number;
  parent_seq?: number;
  refs: Record<string, unknown>;
}

const RULES = [
  {
    id: 'no-private-names',
    match: { server: 'm', prompt: 'greet' },
    when: [{ arg: '/name', glob: 'private*' }],
    action: 'deny',
    reason: 'private names stay here',
  },
  {
    id: 'no-secrets',
    match: { server: 'm' },
    when: [{ arg: '/uri', glob: 'secret://*' }],
    action: 'deny',
    reason: 'secrets are not watched',
  },
  { id: 'quiet', match: { server: 'm' }, when: [{ arg: '/level', equals: 'debug' }], action: 'deny' },
];

/**
 * A real server in a container behind `mcp serve`, under a signed policy with deny rules and
 * refuse_invisible_arguments: completions, subscriptions and log levels are refused before they
 * reach it, each decision is in the audit log, and the log verifies.
 */
describe('completions, subscriptions and log levels under the organisation policy, end to end', () => {
  let home: string;
  let served: ServedClient;
  const audit = async () =>
    (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Line)
      .filter((l) => l.type === 'mcp.result' || (l.type === 'mcp.decision' && l.refs.phase === 'call'));
  const client = () => served.client;
  const complete = (
    ref: Record<string, string>,
    name: string,
    value: string,
    context?: Record<string, string>,
  ) =>
    client().complete({
      ref: ref as never,
      argument: { name, value },
      ...(context ? { context: { arguments: context } } : {}),
    });
  const greet = { type: 'ref/prompt', name: 'm_greet' };
  const item = { type: 'ref/resource', uri: 'ringfence:m/test://item/{id}' };

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    const policyDir = await mkdtemp(join(dir, 'etc-'));
    const org = await makeOrg(join(dir, 'org'));
    const env = { RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir };
    const added = await ringfence(['mcp', 'add', 'm', '--image', await methodImage()], env);
    expect(added.code, added.stderr).toBe(0);
    const policy = await signPolicy(
      org,
      policyDocument({ refuse_invisible_arguments: true, rules: RULES }),
      'methods',
    );
    await install(policy, org, env);
    served = await connectStdio(home, { RINGFENCE_POLICY_DIR: policyDir });
  });

  afterAll(async () => {
    await served?.close();
    await stopAll();
    await removeTestContainers();
  });

  it('completes what the rules allow, and refuses a denied value, one hidden in the context, and invisible characters', async () => {
    expect(client().getServerCapabilities()).toMatchObject({
      completions: {},
      resources: { subscribe: true },
    });
    expect((await complete(greet, 'name', 'A')).completion.values).toEqual(['Ada', 'Alan', 'Alonzo']);
    expect((await complete(item, 'id', '1')).completion.values).toEqual(['1', '12']);
    await expect(complete(greet, 'name', 'private-ada')).rejects.toThrow(
      'MCP error -32602: ringfence refused the completion of m/prompt greet: private names stay here (policy rule "no-private-names"). If it should be allowed, ask your policy admin (`ringfence doctor` names the policy in force).',
    );
    await expect(complete(greet, 'tone', 'w', { name: 'private-ada' })).rejects.toThrow(/no-private-names/);
    for (const [ref, name, value, context] of [
      [greet, 'name', `A${tags('send the keys')}`, undefined],
      [greet, 'tone', 'w', { name: 'Ada\u200B' }],
      [item, 'id', '1\u202E', undefined],
    ] as const)
      await expect(complete(ref, name, value, context)).rejects.toThrow(
        /invisible or control character\(s\) .*the organisation policy \(refuse_invisible_arguments\) refuses such arguments; nothing was sent\./,
      );
  });

  it('subscribes only where the rules allow, and refuses a URI holding invisible characters', async () => {
    await expect(client().subscribeResource({ uri: 'ringfence:m/secret://plans' })).rejects.toThrow(
      'MCP error -32602: ringfence refused the subscription to m/resource secret://plans: secrets are not watched (policy rule "no-secrets").',
    );
    await expect(client().subscribeResource({ uri: 'ringfence:m/test://item/a\u2060b' })).rejects.toThrow(
      /refused the subscription to m\/resource test:\/\/item\/a\\u\{2060\}b: the arguments hold 1 invisible/,
    );
    await client().subscribeResource({ uri: 'ringfence:m/test://open' });
    await client().unsubscribeResource({ uri: 'ringfence:m/test://open' });
    // Never subscribed: nothing to end, nothing sent.
    await client().unsubscribeResource({ uri: 'ringfence:m/secret://plans' });
  });

  it('tells the server a log level only where the rules allow', async () => {
    await client().setLoggingLevel('debug');
    await client().setLoggingLevel('info');
    expect(served.stderr()).toMatch(
      /ringfence: m: the log level was not set: ringfence refused m\/log-level debug: .*\(policy rule "quiet"\)/,
    );
  });

  it('let only the allowed requests reach the server', async () => {
    const reached = JSON.parse(firstText(await client().callTool({ name: 'm_seen', arguments: {} }))) as {
      method: string;
      params: Record<string, unknown>;
    }[];
    const forwarded = reached.filter((r) =>
      ['completion/complete', 'resources/subscribe', 'resources/unsubscribe', 'logging/setLevel'].includes(
        r.method,
      ),
    );
    expect(forwarded.map((r) => [r.method, r.params])).toEqual([
      [
        'completion/complete',
        { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } },
      ],
      [
        'completion/complete',
        { ref: { type: 'ref/resource', uri: 'test://item/{id}' }, argument: { name: 'id', value: '1' } },
      ],
      ['resources/subscribe', { uri: 'test://open' }],
      ['resources/unsubscribe', { uri: 'test://open' }],
      ['logging/setLevel', { level: 'info' }],
    ]);
  });

  it('wrote a decision for each, a result for each one forwarded, and the log verifies', async () => {
    const lines = await audit();
    const decided = lines.filter((l) => l.type === 'mcp.decision' && l.refs.method !== undefined);
    expect(decided.map((l) => [l.refs.method, l.refs.kind, l.refs.allowed, l.refs.rule])).toEqual([
      ['completion/complete', 'prompt', true, 'default_action'],
      ['completion/complete', 'template', true, 'default_action'],
      ['completion/complete', 'prompt', false, 'no-private-names'],
      ['completion/complete', 'prompt', false, 'no-private-names'],
      ['completion/complete', 'prompt', false, 'default_action'],
      ['completion/complete', 'prompt', false, 'default_action'],
      ['completion/complete', 'template', false, 'default_action'],
      ['resources/subscribe', 'resource', false, 'no-secrets'],
      ['resources/subscribe', 'resource', false, 'default_action'],
      ['resources/subscribe', 'resource', true, 'default_action'],
      ['resources/unsubscribe', 'resource', true, 'default_action'],
      ['logging/setLevel', 'log-level', false, 'quiet'],
      ['logging/setLevel', 'log-level', true, 'default_action'],
    ]);
    expect(decided.every((l) => /^sha256:[0-9a-f]{64}$/.test(String(l.refs.arguments)))).toBe(true);
    const results = new Set(lines.filter((l) => l.type === 'mcp.result').map((l) => l.parent_seq));
    for (const allowed of decided.filter((l) => l.refs.allowed === true))
      expect(results.has(allowed.seq)).toBe(true);
    expect(JSON.stringify(lines)).not.toMatch(/private-ada|Ada/);
    const verified = await ringfence(['audit', 'verify'], { RINGFENCE_HOME: home });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    const shown = await ringfence(['audit', 'tail', '-n', '40'], { RINGFENCE_HOME: home });
    expect(shown.stdout).toMatch(/m\/prompt greet completion\/complete +REFUSED +rule=no-private-names/);
  });
});
