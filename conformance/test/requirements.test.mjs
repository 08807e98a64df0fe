// The newest suite's requirement sets: which server scenarios a revision scores and which it only
// runs. Read from the suite's own YAML; a format the reader does not know is refused, not guessed.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRequirements, REVISIONS, readRequirements } from '../lib/requirements.mjs';
import { SUITE_NEXT_DIR } from '../lib/suite.mjs';

const SAMPLE = `# comment
server:
  - server-stateless
  - tools-list

client:
  - tools_call

not_scored:
  - scenario: auth/dpop
    leg: client
    reason: extension
  - scenario: tasks-lifecycle
    leg: server
    reason: extension
    note: >-
      pending against the reference fixture
  - scenario: json-schema-2020-12
    leg: server
    reason: pending
`;

describe('parseRequirements', () => {
  it('reads the scored server scenarios and the server legs of not_scored, with their reasons', () => {
    expect(parseRequirements(SAMPLE)).toEqual({
      scored: ['server-stateless', 'tools-list'],
      notScored: [
        { scenario: 'tasks-lifecycle', reason: 'extension' },
        { scenario: 'json-schema-2020-12', reason: 'pending' },
      ],
    });
  });

  it('refuses a server list it cannot read, and a set with no server scenarios', () => {
    expect(() => parseRequirements('server:\n  - a\n  - scenario: b\n')).toThrow(/unexpected line/);
    expect(() => parseRequirements('client:\n  - a\n')).toThrow(/no server scenarios/);
  });

  const installed = join(SUITE_NEXT_DIR, 'node_modules', '@modelcontextprotocol', 'conformance');
  it.runIf(existsSync(installed))('reads both sets of the installed suite', () => {
    for (const revision of REVISIONS) {
      const set = readRequirements(installed, revision);
      expect(set.scored.length).toBeGreaterThan(20);
      expect(set.scored).toContain('dns-rebinding-protection');
    }
    expect(readRequirements(installed, '2026-07-28').scored).toContain('server-stateless');
  });
});
