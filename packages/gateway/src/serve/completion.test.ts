import { afterEach, describe, expect, it } from 'vitest';
import { contentDigest } from '../audit/format.js';
import {
  EverythingUpstream,
  everyReachDecided,
  type Line,
  policyOf,
  startGateway,
} from './__fixtures__/methods-harness.js';
import { completionArgs, templateVariables } from './completion.js';

/** ASCII hidden as Unicode TAG characters: invisible at a terminal, there for the server. */
const tags = (ascii: string) =>
  Array.from(ascii, (c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
const prompt = (value: string, context?: Record<string, string>, name = 'name') => ({
  ref: { type: 'ref/prompt', name: 's_greet' },
  argument: { name, value },
  ...(context ? { context: { arguments: context } } : {}),
});
const template = (value: string, context?: Record<string, string>, name = 'id') => ({
  ref: { type: 'ref/resource', uri: 'ringfence:s/test://t/{id}{?page}' },
  argument: { name, value },
  ...(context ? { context: { arguments: context } } : {}),
});
const decisions = (lines: Line[]) => lines.filter((l) => l.type === 'mcp.decision');

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});
async function setup(rules: Parameters<typeof policyOf>[0] = [], extra: Parameters<typeof policyOf>[1] = {}) {
  const s = new EverythingUpstream('s');
  const started = await startGateway([s], policyOf(rules, extra));
  cleanup = started.done;
  return { s, ...started };
}

describe('completions go through the rules, the invisible-argument refusal and the audit log as calls do', () => {
  it('forwards an allowed completion with a decision and a result entry naming the method, digests only', async () => {
    const { s, gateway, lines, verify } = await setup();
    const answer = await gateway.complete(prompt('Ad', { tone: 'warm' }), { agent: 'bot' });
    expect(answer).toEqual({ completion: { values: ['Ada', 'Alan\\u{202E}'], total: 2 } });
    expect(s.reached).toEqual([
      {
        method: 'completion/complete',
        params: {
          ref: { type: 'ref/prompt', name: 'greet' },
          argument: { name: 'name', value: 'Ad' },
          context: { arguments: { tone: 'warm' } },
        },
      },
    ]);
    const written = await lines();
    expect(written).toMatchObject([
      {
        type: 'mcp.decision',
        agent: 'bot',
        refs: {
          phase: 'call',
          server: 's',
          tool: 'greet',
          kind: 'prompt',
          method: 'completion/complete',
          allowed: true,
          rule: 'default_action',
          arguments: contentDigest({ tone: 'warm', name: 'Ad' }),
        },
      },
      {
        type: 'mcp.result',
        refs: { server: 's', tool: 'greet', kind: 'prompt', method: 'completion/complete' },
      },
    ]);
    expect(JSON.stringify(written)).not.toContain('warm');
    everyReachDecided(written, [s]);
    expect(await verify()).toMatchObject({ ok: true, interrupted: [] });
  });

  it('refuses under a deny rule naming the prompt, by its arguments, or by a context argument: audited, nothing sent', async () => {
    const { s, gateway, lines, verify } = await setup([
      {
        id: 'no-secret-names',
        match: { server: 's', prompt: 'greet' },
        when: [{ arg: '/name', glob: 'secret*' }],
        action: 'deny',
        reason: 'names are private',
      },
      { id: 'no-rude', match: { prompt: 'greet' }, when: [{ arg: '/tone', equals: 'rude' }], action: 'deny' },
    ]);
    await expect(gateway.complete(prompt('secret-a'))).rejects.toMatchObject({ code: 'REFUSED' });
    await expect(gateway.complete(prompt('Ad', { tone: 'rude' }))).rejects.toThrow(
      /^ringfence refused the completion of s\/prompt greet: .*\(policy rule "no-rude"\)\. If it should be allowed, ask your policy admin/,
    );
    // The context may not name the argument being completed to slip a value past a rule.
    await expect(gateway.complete(prompt('secret', { name: 'Ada' }))).rejects.toThrow(/no-secret-names/);
    expect(s.reached).toEqual([]);
    const written = await lines();
    expect(decisions(written).map((l) => [l.refs.allowed, l.refs.rule, l.refs.method])).toEqual([
      [false, 'no-secret-names', 'completion/complete'],
      [false, 'no-rude', 'completion/complete'],
      [false, 'no-secret-names', 'completion/complete'],
    ]);
    expect(await verify()).toMatchObject({ ok: true });
  });

  it('refuses invisible characters in the value, a context value, a context name or the argument name (refuse_invisible_arguments)', async () => {
    const { s, gateway, lines } = await setup([], { refuse_invisible_arguments: true });
    const attempts = [
      prompt(`Ad${tags('ignore all')}`),
      prompt('Ad', { tone: `warm\u200B` }),
      prompt('Ad', { [`tone\u202E`]: 'warm' }),
      prompt('Ad', undefined, `name\u2060`),
      template(`1\u0007`),
      template('1', { page: '\u{E0041}' }),
    ];
    for (const attempt of attempts)
      await expect(gateway.complete(attempt), JSON.stringify(attempt)).rejects.toThrow(
        /invisible or control character\(s\).*the organisation policy \(refuse_invisible_arguments\) refuses such arguments; nothing was sent/,
      );
    expect(s.reached).toEqual([]);
    const written = await lines();
    expect(written).toHaveLength(attempts.length);
    expect(written.every((l) => l.refs.allowed === false && l.refs.method === 'completion/complete')).toBe(
      true,
    );
    expect(written.map((l) => l.refs.kind)).toEqual([
      'prompt',
      'prompt',
      'prompt',
      'prompt',
      'template',
      'template',
    ]);
  });

  it('drops a context entry for the argument being completed, so no unchecked value is forwarded', async () => {
    const { s, gateway } = await setup([], { refuse_invisible_arguments: true });
    await gateway.complete(prompt('Ad', { name: tags('hidden'), tone: 'warm' }));
    expect(s.reached[0]?.params).toEqual({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'name', value: 'Ad' },
      context: { arguments: { tone: 'warm' } },
    });
  });

  it('honours a rule’s own refuse_invisible for a template (whole-server rules decide templates)', async () => {
    const { s, gateway, lines } = await setup([
      { id: 'tools-only', match: { server: 's', tool: 'echo' }, action: 'deny' },
      { id: 'strict-s', match: { server: 's' }, action: 'allow', refuse_invisible: true },
    ]);
    await expect(gateway.complete(template(`1${tags('x')}`))).rejects.toThrow(
      /policy rule "strict-s" \(refuse_invisible\)/,
    );
    await gateway.complete(template('1'));
    expect(s.reached).toHaveLength(1);
    expect(
      decisions(await lines()).map((l) => [l.refs.rule, l.refs.allowed, l.refs.kind, l.refs.tool]),
    ).toEqual([
      ['strict-s', false, 'template', 'test://t/{id}{?page}'],
      ['strict-s', true, 'template', 'test://t/{id}{?page}'],
    ]);
  });

  it('refuses a template completion under a whole-server deny rule, and a prompt one under a deny on the server', async () => {
    const { s, gateway, lines } = await setup([
      { id: 'no-s', match: { server: 's' }, action: 'deny', reason: 'retired' },
    ]);
    await expect(gateway.complete(template('1'))).rejects.toThrow(
      /completion of s\/template test:\/\/t\/\{id\}\{\?page\}: retired \(policy rule "no-s"\)/,
    );
    await expect(gateway.complete(prompt('A'))).rejects.toThrow(/retired \(policy rule "no-s"\)/);
    expect(s.reached).toEqual([]);
    expect(decisions(await lines())).toHaveLength(2);
  });

  it('refuses under an ask rule without asking anyone (a completion runs at every keystroke)', async () => {
    const { s, gateway, lines } = await setup([{ id: 'ask-s', match: { server: 's' }, action: 'ask' }]);
    let asked = 0;
    const caller = {
      ask: async () => {
        asked++;
        return 'accept' as const;
      },
    };
    await expect(gateway.complete(prompt('A'), caller)).rejects.toThrow(
      /policy rule "ask-s" needs a person to approve it, and nobody is asked about a completion \(one runs at every keystroke\); nothing was sent/,
    );
    expect(asked).toBe(0);
    expect(s.reached).toEqual([]);
    expect(decisions(await lines())).toMatchObject([{ refs: { allowed: false, rule: 'ask-s' } }]);
  });

  it('refuses an undeclared argument or variable after the rules, audited', async () => {
    const { s, gateway, lines } = await setup();
    await expect(gateway.complete(prompt('x', undefined, 'secret'))).rejects.toThrow(
      'ringfence refused the completion of s/prompt greet: the prompt does not declare an argument "secret"; nothing was asked. Complete one of: "name", "tone".',
    );
    await expect(gateway.complete(template('x', { path: '/' }))).rejects.toThrow(
      /the template has no variable "path" \(in context.arguments\)/,
    );
    expect(s.reached).toEqual([]);
    expect(decisions(await lines()).map((l) => l.refs.rule)).toEqual([
      'completion-arguments',
      'completion-arguments',
    ]);
  });

  it('decides by the calling agent, and refuses odd names and oversized values before anything is sent', async () => {
    const { s, gateway, lines } = await setup([
      { id: 'no-interns', match: { server: 's', agent: 'intern' }, action: 'deny' },
    ]);
    await expect(gateway.complete(prompt('A'), { agent: 'intern' })).rejects.toThrow(/no-interns/);
    await gateway.complete(prompt('A'), { agent: 'lead' });
    for (const name of ['__proto__', 'constructor', 'toString'])
      await expect(gateway.complete(prompt('A', undefined, name))).rejects.toThrow(
        /does not declare an argument/,
      );
    await expect(
      gateway.complete(prompt('A', JSON.parse('{"__proto__":"x"}') as Record<string, string>)),
    ).rejects.toThrow(/does not declare/);
    await expect(gateway.complete(prompt('A'.repeat(2 * 1024 * 1024)))).rejects.toThrow(
      /over the \d+-byte cap/,
    );
    await expect(
      gateway.complete({ ref: { type: 'ref/prompt', name: { toString: 's_greet' } } as never }),
    ).rejects.toMatchObject({
      code: 'UNKNOWN_PROMPT',
    });
    expect(s.reached).toHaveLength(1);
    expect(decisions(await lines()).map((l) => [l.agent ?? '-', l.refs.allowed, l.refs.rule])).toEqual([
      ['intern', false, 'no-interns'],
      ['lead', true, 'default_action'],
      ...Array(4).fill(['-', false, 'completion-arguments']),
      ['-', false, 'arguments'],
    ]);
  });

  it('records a completion the client cancelled as cancelled by the client', async () => {
    const { gateway, lines, verify } = await setup();
    const cancel = new AbortController();
    const pending = gateway.complete(prompt('hold'), {}, { signal: cancel.signal });
    setTimeout(() => cancel.abort(), 50);
    await expect(pending).rejects.toThrow(/was cancelled by the client/);
    expect(await lines()).toMatchObject([
      { type: 'mcp.decision', refs: { allowed: true, method: 'completion/complete' } },
      { type: 'mcp.result', refs: { is_error: true, cancelled: 'client', method: 'completion/complete' } },
    ]);
    expect(await verify()).toMatchObject({ ok: true, interrupted: [] });
  });

  it('asks nothing of a server that does not complete, and writes nothing', async () => {
    const quiet = new EverythingUpstream('s', { completions: false });
    const started = await startGateway([quiet]);
    cleanup = started.done;
    expect(await started.gateway.complete(prompt('A'))).toEqual({ completion: { values: [] } });
    expect(quiet.reached).toEqual([]);
    expect(await started.lines()).toEqual([]);
  });
});

describe('completion arguments', () => {
  it('knows the variables of every expression form', () => {
    expect([...templateVariables('t://{a}/{+b}{/c*}{?d,e:3}{#f}')]).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('reads the context and the value typed as one set of arguments, refusing what is not strings', () => {
    expect(
      completionArgs({
        argument: { name: 'id', value: '1' },
        context: { arguments: { page: '2', id: '9' } },
      }),
    ).toEqual({
      name: 'id',
      args: { page: '2', id: '1' },
    });
    expect(completionArgs({ argument: { name: 'id', value: 1 } })).toBe(
      'the argument to complete must have a string name and value.',
    );
    expect(completionArgs({ argument: { name: 'id', value: '1' }, context: { arguments: { a: 1 } } })).toBe(
      'context argument "a" must be a string.',
    );
    expect(completionArgs({ argument: { name: 'id', value: '1' }, context: { arguments: ['x'] } })).toBe(
      'context.arguments must be an object of strings.',
    );
    const proto = JSON.parse('{"__proto__":"x"}') as Record<string, string>;
    const parsed = completionArgs({ argument: { name: 'id', value: '1' }, context: { arguments: proto } });
    expect(typeof parsed !== 'string' && Object.keys(parsed.args)).toEqual(['__proto__', 'id']);
  });
});
