import { expect, it } from 'vitest';
import { fixedCredentials } from '../../credentials/registered.js';
import { SecretScanner } from '../../credentials/scan/scanner.js';
import { FakeUpstream } from '../../ports/__fixtures__/fake-upstream.js';
import type { Caller } from '../../ports/caller.js';
import type { CallObserver } from '../../ports/observer.js';
import { LOCAL_ONLY, type PolicyView } from '../../ports/policy.js';
import type { SchemaChecks } from '../../ports/schema.js';
import type { CatalogEntry } from '../catalog.js';
import { runForward } from './index.js';
import type { PipelineDeps, ToolCallRequest } from './types.js';

const entry: CatalogEntry = {
  kind: 'tool',
  exposedName: 'files_read',
  server: 'files',
  tool: 'read',
  digest: `sha256:${'a'.repeat(64)}`,
  presented: {},
  inputSchema: { type: 'object' },
  outputSchema: undefined,
};

/** A pipeline whose observer writes down every hook, in order. */
function observed(policy: Partial<PolicyView>, options: { fails?: boolean; caller?: Caller } = {}) {
  const seen: string[] = [];
  const observer: CallObserver = {
    begin: (call) => {
      seen.push(`begin ${call.method} ${call.server} ${call.name}`);
      return {
        decided: (d) => seen.push(`decided ${d.allowed} ${d.rule} ${d.code ?? ''}${d.asked ? ' asked' : ''}`),
        forwarding: () => seen.push('forwarding'),
        answered: (ok) => seen.push(`answered ${ok}`),
        ended: () => seen.push('ended'),
      };
    },
  };
  const ok = async () => ({ ok: true });
  const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
  const upstream = new FakeUpstream('files', {
    destination: 'sandbox mcp-files',
    limits: { maxResultBytes: 1024 },
    callTool: async () => {
      seen.push('upstream');
      if (options.fails) throw new Error('boom');
      return { content: [{ type: 'text', text: 'hello' }] };
    },
  });
  const deps: PipelineDeps = {
    policy: { ...LOCAL_ONLY, ...policy },
    guard,
    audit: { append: async () => 1 },
    policyRef: {},
    maxResultBytes: 1024,
    log: () => {},
    linkUri: (server, uri) => `ringfence:${server}/${uri}`,
    secrets: new SecretScanner(fixedCredentials([])),
    observer,
  };
  const request: ToolCallRequest = {
    method: 'tools/call',
    entry,
    args: {},
    caller: options.caller ?? {},
    upstream,
    unavailableReason: '',
    protocolVersion: '2025-11-25',
  };
  return { run: () => runForward(deps, request), seen };
}

it('tells the observer an allowed call: decided, then the upstream request around it, then ended', async () => {
  const { run, seen } = observed({});
  await run();
  expect(seen).toEqual([
    'begin tools/call files read',
    'decided true no-policy ',
    'forwarding',
    'upstream',
    'answered true',
    'ended',
  ]);
});

it('tells a refusal by its rule and code, and nothing reaches the server', async () => {
  const { run, seen } = observed({ decideCall: () => ({ action: 'deny', rule: 'no-read', reason: 'off' }) });
  await run();
  expect(seen).toEqual(['begin tools/call files read', 'decided false no-read POLICY_DENIED', 'ended']);
});

it('tells a call a person approved as asked, and an upstream failure as not ok', async () => {
  const { run, seen } = observed(
    { decideCall: () => ({ action: 'ask', rule: 'ask-me', reason: 'sensitive' }) },
    { fails: true, caller: { ask: async () => 'accept' } },
  );
  await run();
  expect(seen).toEqual([
    'begin tools/call files read',
    'decided true ask-me  asked',
    'forwarding',
    'upstream',
    'answered false',
    'ended',
  ]);
});
