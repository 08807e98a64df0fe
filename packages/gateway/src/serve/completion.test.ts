import { describe, expect, it } from 'vitest';
import { LOCAL_ONLY, type PolicyView } from '../ports/policy.js';
import type { TemplateEntry } from './catalog.js';
import { checkTemplateCompletion, templateVariables } from './completion.js';
import { compileTemplate } from './resource-uri.js';

const template = (uriTemplate: string): TemplateEntry => ({
  kind: 'template',
  exposedName: `ringfence:docs/${uriTemplate}`,
  server: 'docs',
  template: uriTemplate,
  digest: `sha256:${'0'.repeat(64)}`,
  presented: {},
  matcher: compileTemplate(uriTemplate) as never,
});

describe('template completions', () => {
  it('knows the variables of every expression form', () => {
    expect([...templateVariables('t://{a}/{+b}{/c*}{?d,e:3}{#f}')]).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('forwards only a variable of the pinned template, with variables of it as context', () => {
    const entry = template('test://template/{id}/data{?page}');
    expect(checkTemplateCompletion(entry, { argument: { name: 'id', value: '1' } }, LOCAL_ONLY, {})).toEqual({
      argument: { name: 'id', value: '1' },
      context: undefined,
    });
    expect(
      checkTemplateCompletion(
        entry,
        { argument: { name: 'id', value: '1' }, context: { arguments: { page: '2' } } },
        LOCAL_ONLY,
        {},
      ),
    ).toMatchObject({ context: { page: '2' } });
    expect(checkTemplateCompletion(entry, { argument: { name: 'path', value: '/' } }, LOCAL_ONLY, {})).toBe(
      'the template has no variable "path"; nothing was asked.',
    );
    expect(
      checkTemplateCompletion(
        entry,
        { argument: { name: 'id', value: '1' }, context: { arguments: { secret: 'x' } } },
        LOCAL_ONLY,
        {},
      ),
    ).toBe('context argument "secret" is not a variable of the template.');
    expect(checkTemplateCompletion(entry, { argument: { name: 'id', value: 1 } }, LOCAL_ONLY, {})).toBe(
      'the argument to complete must have a string name and value.',
    );
  });

  it('refuses when the policy’s whole-server rules do not simply allow reading from the server', () => {
    const asks: PolicyView = {
      ...LOCAL_ONLY,
      decideCall: () => ({ action: 'ask', rule: 'ask-docs', reason: 'a person decides' }),
    };
    expect(
      checkTemplateCompletion(template('t://{id}'), { argument: { name: 'id', value: '' } }, asks, {}),
    ).toBe('policy rule "ask-docs" does not allow reading from docs (ask: a person decides).');
  });
});
