import { describe, expect, it } from 'vitest';
import { MISSING, resolvePointer } from '../json/pointer.js';
import type { Policy, Rule } from '../policy/types.js';
import { basePolicy } from '../testing/fixtures.js';
import { forAll, int, pick } from '../testing/property.js';
import {
  allowedTools,
  decideCall,
  egressCeiling,
  firstSight,
  isEgressWithinCeiling,
  isImageAllowed,
  isReadOnlyTool,
  isToolAllowed,
  maxCallSeconds,
  orgPins,
  ruleMatches,
} from './evaluate.js';
import { globMatches } from './glob.js';

const DIGEST_A = `sha256:${'a'.repeat(64)}`;
const DIGEST_C = `sha256:${'c'.repeat(64)}`;

describe('images', () => {
  const policy = basePolicy();

  it('matches names exactly and case-insensitively', () => {
    expect(isImageAllowed(policy, { name: 'node:22-alpine' }).allowed).toBe(true);
    expect(isImageAllowed(policy, { name: 'NODE:22-Alpine' }).allowed).toBe(true);
    expect(isImageAllowed(policy, { name: 'node:22' }).allowed).toBe(false);
    expect(isImageAllowed(policy, { name: 'node:22-alpine-evil' }).allowed).toBe(false);
  });

  it('matches digest entries by content, not by name or tag', () => {
    expect(
      isImageAllowed(policy, { name: 'ghcr.io/example-corp/docs-mcp:latest', digests: [DIGEST_A] }).allowed,
    ).toBe(true);
    expect(isImageAllowed(policy, { name: 'anything:else', digests: [DIGEST_A] }).allowed).toBe(true);
    expect(
      isImageAllowed(policy, { name: 'ghcr.io/example-corp/docs-mcp:latest', digests: [DIGEST_C] }).allowed,
    ).toBe(false);
    expect(isImageAllowed(policy, { name: 'ghcr.io/example-corp/docs-mcp' }).allowed).toBe(false);
    expect(isImageAllowed(policy, { name: `ghcr.io/example-corp/docs-mcp@${DIGEST_A}` }).allowed).toBe(true);
    expect(
      isImageAllowed(policy, { name: 'docs:1', digests: [`ghcr.io/example-corp/docs-mcp@${DIGEST_A}`] })
        .allowed,
    ).toBe(true);
    expect(
      isImageAllowed(policy, { name: 'docs:1', digests: [`ghcr.io/example-corp/docs-mcp@${DIGEST_C}`] })
        .allowed,
    ).toBe(false);
  });

  it('allows any image when the list is empty or absent', () => {
    expect(isImageAllowed(basePolicy({ allowed_mcp: [] }), { name: 'x' }).allowed).toBe(true);
    const { allowed_mcp: _drop, ...rest } = basePolicy();
    expect(isImageAllowed(rest as Policy, { name: 'x' }).allowed).toBe(true);
  });
});

describe('servers', () => {
  const policy = basePolicy();

  it('answers tool, pin and read-only questions per server', () => {
    expect(allowedTools(policy, 'github')).toEqual(['list_issues', 'create_issue']);
    expect(allowedTools(policy, 'unknown')).toBeUndefined();
    expect(isToolAllowed(policy, 'github', 'delete_repo')).toBe(false);
    expect(isToolAllowed(policy, 'unknown', 'anything')).toBe(true);
    expect(isToolAllowed(basePolicy({ mcp: [{ server: 'x', allow_tools: [] }] }), 'x', 'a')).toBe(false);
    expect(orgPins(policy, 'github')?.get('list_issues')).toBe(`sha256:${'b'.repeat(64)}`);
    expect(orgPins(policy, 'unknown')).toBeUndefined();
    expect(isReadOnlyTool(policy, 'github', 'list_issues')).toBe(true);
    expect(isReadOnlyTool(policy, 'github', 'create_issue')).toBe(false);
  });

  it('pins prompts by kind: a pinned server without prompt pins exposes no prompt', () => {
    const DIGEST_B = `sha256:${'b'.repeat(64)}`;
    const pinned = basePolicy({
      mcp: [
        {
          server: 'docs',
          pins: [
            { tool: 'greet', digest: DIGEST_A },
            { prompt: 'greet', digest: DIGEST_B },
          ],
        },
        { server: 'tools-only', pins: [{ tool: 'x', digest: DIGEST_A }] },
      ],
    });
    expect(orgPins(pinned, 'docs', 'tool')).toEqual(new Map([['greet', DIGEST_A]]));
    expect(orgPins(pinned, 'docs', 'prompt')).toEqual(new Map([['greet', DIGEST_B]]));
    expect(orgPins(pinned, 'tools-only', 'prompt')).toEqual(new Map());
    expect(orgPins(pinned, 'unknown', 'prompt')).toBeUndefined();
  });

  it('pins resources by URI and templates by URI template, each kind apart', () => {
    const DIGEST_B = `sha256:${'b'.repeat(64)}`;
    const pinned = basePolicy({
      mcp: [
        {
          server: 'docs',
          pins: [
            { resource: 'test://a', digest: DIGEST_A },
            { template: 'test://a', digest: DIGEST_B },
          ],
        },
      ],
    });
    expect(orgPins(pinned, 'docs', 'resource')).toEqual(new Map([['test://a', DIGEST_A]]));
    expect(orgPins(pinned, 'docs', 'template')).toEqual(new Map([['test://a', DIGEST_B]]));
    expect(orgPins(pinned, 'docs', 'tool')).toEqual(new Map());
    expect(orgPins(pinned, 'docs', 'instructions')).toEqual(new Map());
  });

  it("pins a server's instructions under the one name instructions", () => {
    const pinned = basePolicy({
      mcp: [{ server: 'docs', pins: [{ instructions: true, digest: DIGEST_A }] }],
    });
    expect(orgPins(pinned, 'docs', 'instructions')).toEqual(new Map([['instructions', DIGEST_A]]));
    expect(orgPins(pinned, 'docs', 'tool')).toEqual(new Map());
  });

  it('gives the call-time cap of a server that has one, and none otherwise', () => {
    const capped = basePolicy({ mcp: [{ server: 'slow', max_call_seconds: 900 }] });
    expect(maxCallSeconds(capped, 'slow')).toBe(900);
    expect(maxCallSeconds(capped, 'other')).toBeUndefined();
    expect(maxCallSeconds(policy, 'github')).toBeUndefined();
  });

  it("gives what a never-pinned server gets: its entry's first_sight, else the policy's, else pin", () => {
    expect(firstSight(basePolicy(), 'github')).toBe('pin');
    const top = basePolicy({
      first_sight: 'withhold',
      mcp: [{ server: 'trusted', first_sight: 'pin' }, { server: 'plain' }],
    });
    expect(firstSight(top, 'unlisted')).toBe('withhold');
    expect(firstSight(top, 'plain')).toBe('withhold');
    expect(firstSight(top, 'trusted')).toBe('pin');
    const entry = basePolicy({ mcp: [{ server: 'docs', first_sight: 'withhold' }] });
    expect(firstSight(entry, 'docs')).toBe('withhold');
    expect(firstSight(entry, 'other')).toBe('pin');
  });

  it('gives the egress ceiling and checks requests against it', () => {
    const github = egressCeiling(policy, 'github');
    expect(github).toEqual({ mode: 'allow', hosts: ['api.github.com'] });
    expect(egressCeiling(policy, 'other')).toEqual({ mode: 'deny' });
    expect(egressCeiling(basePolicy({ default_egress: 'any' }), 'other')).toEqual({ mode: 'any' });
    expect(isEgressWithinCeiling(github, 'api.github.com')).toBe(true);
    expect(isEgressWithinCeiling(github, 'API.GitHub.com.')).toBe(true);
    expect(isEgressWithinCeiling(github, 'api.github.com:443')).toBe(true);
    expect(isEgressWithinCeiling(github, 'api.github.com:8443')).toBe(false);
    expect(isEgressWithinCeiling(github, 'evil.com')).toBe(false);
    expect(isEgressWithinCeiling(github, '*.github.com')).toBe(false);
    const wild = { mode: 'allow' as const, hosts: ['*.example.com'] };
    expect(isEgressWithinCeiling(wild, 'a.example.com')).toBe(true);
    expect(isEgressWithinCeiling(wild, '*.b.example.com')).toBe(true);
    expect(isEgressWithinCeiling(wild, 'example.com')).toBe(false);
    expect(isEgressWithinCeiling(wild, 'badexample.com')).toBe(false);
    expect(isEgressWithinCeiling({ mode: 'deny' }, 'a.example.com')).toBe(false);
  });

  it('an empty egress_allow means no network, even under default_egress: any', () => {
    const ceiling = egressCeiling(
      basePolicy({ default_egress: 'any', mcp: [{ server: 'x', egress_allow: [] }] }),
      'x',
    );
    expect(ceiling).toEqual({ mode: 'deny' });
    expect(isEgressWithinCeiling(ceiling, 'evil.com')).toBe(false);
  });
});

describe('decideCall for prompts', () => {
  const policy = basePolicy({
    default_action: 'allow',
    rules: [
      { id: 'no-greet-tool', match: { server: 's', tool: 'greet' }, action: 'deny' },
      { id: 'ask-greet-prompt', match: { server: 's', prompt: 'greet' }, action: 'ask' },
      { id: 'server-wide', match: { server: 'locked' }, action: 'deny' },
    ],
  });

  it('a rule naming a tool never matches a prompt of that name, and the reverse', () => {
    expect(decideCall(policy, { server: 's', prompt: 'greet', arguments: {} }).rule).toBe('ask-greet-prompt');
    expect(decideCall(policy, { server: 's', tool: 'greet', arguments: {} }).rule).toBe('no-greet-tool');
    expect(decideCall(policy, { server: 's', prompt: 'other', arguments: {} }).rule).toBeNull();
  });

  it('a rule naming neither covers the prompts of its server too', () => {
    expect(decideCall(policy, { server: 'locked', prompt: 'p', arguments: {} })).toMatchObject({
      action: 'deny',
      rule: 'server-wide',
    });
  });
});

describe('decideCall', () => {
  const policy = basePolicy();
  const call = {
    server: 'github',
    tool: 'create_issue',
    scope: 'contractors',
    arguments: { repo: 'example-corp/prod-api' },
  };

  it('applies the matching rule', () => {
    expect(decideCall(policy, call)).toEqual({
      action: 'deny',
      rule: 'no-issues-on-prod',
      reason: 'contractors may not file issues on production repositories',
    });
  });

  it('falls back to default_action when a match field or condition differs', () => {
    for (const other of [
      { ...call, scope: 'staff' },
      { ...call, scope: undefined },
      { ...call, tool: 'list_issues' },
      { ...call, server: 'gitlab' },
      { ...call, arguments: { repo: 'example-corp/dev-api' } },
      { ...call, arguments: { repo: 42 } },
      { ...call, arguments: {} },
      { ...call, arguments: undefined },
    ]) {
      expect(decideCall(policy, other)).toEqual({
        action: 'allow',
        rule: null,
        reason: 'default_action of policy example-corp',
      });
    }
  });

  it('supports equals, in, glob and exists on JSON Pointers', () => {
    const rules: Rule[] = [
      { id: 'eq', when: [{ arg: '/a/0/b', equals: { x: [1, 2] } }], action: 'deny' },
      { id: 'in', when: [{ arg: '/mode', in: ['rm', 'rmdir'] }], action: 'ask' },
      { id: 'exists', when: [{ arg: '/force', exists: true }], action: 'deny' },
      { id: 'absent', when: [{ arg: '/path', exists: false }], action: 'ask' },
      { id: 'slash', when: [{ arg: '/a~1b', glob: '?x\\*' }], action: 'deny' },
    ];
    const p = basePolicy({ rules, default_action: 'allow' });
    const decide = (args: unknown) => decideCall(p, { server: 's', tool: 't', arguments: args }).rule;
    expect(decide({ a: [{ b: { x: [1, 2] } }], path: '/' })).toBe('eq');
    expect(decide({ a: [{ b: { x: [2, 1] } }], path: '/' })).toBe(null);
    expect(decide({ mode: 'rmdir', path: '/' })).toBe('in');
    expect(decide({ force: false, path: '/' })).toBe('exists');
    expect(decide({})).toBe('absent');
    expect(decide({ 'a/b': 'yx*', path: '/' })).toBe('slash');
    expect(decide({ 'a/b': 'yxz', path: '/' })).toBe(null);
  });

  it('matches agent and scope only when the call has them', () => {
    const rule: Rule = { id: 'r', match: { agent: 'ci' }, action: 'deny' };
    expect(ruleMatches(rule, { server: 's', tool: 't', agent: 'ci' })).toBe(true);
    expect(ruleMatches(rule, { server: 's', tool: 't' })).toBe(false);
  });

  it('property: the first matching rule wins, else default_action', () => {
    const servers = ['a', 'b'];
    const tools = ['x', 'y'];
    const actions = ['allow', 'deny', 'ask'] as const;
    forAll(
      400,
      (r) => {
        const rules: Rule[] = Array.from({ length: int(r, 0, 6) }, (_, i) => {
          const match: Rule['match'] = {};
          if (r() < 0.5) match.server = pick(r, servers);
          if (r() < 0.5) match.tool = pick(r, tools);
          const rule: Rule = { id: `r${i}`, match, action: pick(r, actions) };
          if (r() < 0.4) rule.when = [{ arg: '/n', in: [int(r, 0, 2)] }];
          return rule;
        });
        const call = { server: pick(r, servers), tool: pick(r, tools), arguments: { n: int(r, 0, 2) } };
        return { rules, call, fallback: pick(r, actions) };
      },
      ({ rules, call, fallback }) => {
        const policy = basePolicy({ rules, default_action: fallback });
        const decision = decideCall(policy, call);
        const firstIndex = rules.findIndex((rule) => ruleMatches(rule, call));
        if (firstIndex === -1) {
          expect(decision).toMatchObject({ action: fallback, rule: null });
        } else {
          expect(decision).toMatchObject({ action: rules[firstIndex]!.action, rule: rules[firstIndex]!.id });
          // No earlier rule matches, and moving the winner later changes nothing before it.
          expect(rules.slice(0, firstIndex).some((rule) => ruleMatches(rule, call))).toBe(false);
        }
        // Appending rules never changes a decision that an earlier rule made.
        if (firstIndex !== -1) {
          const extended = basePolicy({
            rules: [...rules, { id: 'tail', action: 'deny' }],
            default_action: fallback,
          });
          expect(decideCall(extended, call).rule).toBe(rules[firstIndex]!.id);
        }
      },
    );
  });
});

describe('pointers and globs', () => {
  it('resolves own properties only', () => {
    expect(resolvePointer({ a: 1 }, '/constructor')).toBe(MISSING);
    expect(resolvePointer({ a: 1 }, '/__proto__')).toBe(MISSING);
    expect(resolvePointer({ a: 1 }, '/toString')).toBe(MISSING);
    expect(resolvePointer([1, 2], '/01')).toBe(MISSING);
    expect(resolvePointer([1, 2], '/length')).toBe(MISSING);
    expect(resolvePointer([1, 2], '/1')).toBe(2);
    expect(resolvePointer({ '': { '~': 3 } }, '//~0')).toBe(3);
    expect(resolvePointer('x', '')).toBe('x');
  });

  it('treats only * and ? as special', () => {
    expect(globMatches('example-corp/prod-*', 'example-corp/prod-api')).toBe(true);
    expect(globMatches('example-corp/prod-*', 'example-corp/prod-')).toBe(true);
    expect(globMatches('example-corp/prod-*', 'other/example-corp/prod-api')).toBe(false);
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(globMatches('[ab]', 'a')).toBe(false);
    expect(globMatches('*', 'multi\nline')).toBe(true);
    expect(globMatches('a?c', 'a😀c')).toBe(true);
  });
});

describe('glob safety', () => {
  it('cannot be made to backtrack: patterns with many stars against long, almost-matching text', () => {
    // Exponential with a backtracking regex (minutes); a linear walk answers at once.
    expect(globMatches('*a*a*a*b', 'a'.repeat(50_000))).toBe(false);
    expect(globMatches('*secret*.pem', 'secret'.repeat(100_000))).toBe(false);
    expect(globMatches('*a*a*a*b', `${'a'.repeat(50_000)}b`)).toBe(true);
  });

  it('matches * (any run), ? (one character), escapes, and whole strings only', () => {
    expect(globMatches('a*c', 'abbbc')).toBe(true);
    expect(globMatches('a*c', 'abbbcd')).toBe(false);
    expect(globMatches('a?c', 'abc')).toBe(true);
    expect(globMatches('a?c', 'ac')).toBe(false);
    expect(globMatches('**', '')).toBe(true);
    expect(globMatches('a\\*', 'a*')).toBe(true);
    expect(globMatches('a\\*', 'ab')).toBe(false);
    expect(globMatches('?', '😀')).toBe(true);
    expect(globMatches('prod-*', 'PROD-1')).toBe(false);
  });

  it('compiles every printable character literally', () => {
    for (let c = 0x20; c < 0x7f; c++) {
      const ch = String.fromCharCode(c);
      if (ch === '*' || ch === '?' || ch === '\\') continue;
      expect(globMatches(`a${ch}b`, `a${ch}b`)).toBe(true);
      expect(globMatches(`\\${ch}`, ch)).toBe(true);
    }
  });
});
