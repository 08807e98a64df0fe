import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cliBin, repoRoot } from '../helpers/cli.js';
import { makeOrg, type Org, policyDocument, signPolicy } from '../helpers/policy.js';

const ACTION_DIR = join(repoRoot, '.github', 'actions', 'verify-policy');

interface Step {
  name: string;
  if?: string;
  shell: string;
  env?: Record<string, string>;
  run: string;
}

interface ActionRun {
  code: number;
  log: string;
  summary: string;
  /** The names of the steps that ran. */
  ran: string[];
}

/**
 * Run the composite action's steps the way the runner does: each `run` in
 * `bash --noprofile --norc -eo pipefail`, `${{ inputs.* }}` replaced by the inputs (or their
 * defaults), GITHUB_ACTION_PATH and the summary file set; an `if` on an input decides the step.
 * Any other expression fails the test, so the action cannot grow one this runner ignores.
 */
async function runAction(inputs: Record<string, string>, cwd: string): Promise<ActionRun> {
  const action = parse(await readFile(join(ACTION_DIR, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { default?: string; required?: boolean }>;
    runs: { using: string; steps: Step[] };
  };
  expect(action.runs.using).toBe('composite');
  const values: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) {
    if (spec.required) expect(inputs[name], `input ${name} is required`).toBeDefined();
    values[name] = inputs[name] ?? spec.default ?? '';
  }
  const expand = (text: string) => {
    const out = text.replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_, name: string) => values[name] ?? '');
    expect(out, 'an expression this test runner does not evaluate').not.toContain('${{');
    return out;
  };
  const summaryFile = join(cwd, 'step-summary.md');
  await writeFile(summaryFile, '');
  let log = '';
  const ran: string[] = [];
  for (const step of action.runs.steps) {
    if (step.if !== undefined) {
      const condition = /^inputs\.([\w-]+) (==|!=) '(.*)'$/.exec(step.if);
      expect(condition, `an if this test runner does not evaluate: ${step.if}`).not.toBeNull();
      const equal = values[condition![1]!] === condition![3];
      if (equal !== (condition![2] === '==')) continue;
    }
    expect(step.shell).toBe('bash');
    ran.push(step.name);
    const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v)]));
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        'bash',
        ['--noprofile', '--norc', '-eo', 'pipefail', '-c', expand(step.run)],
        {
          cwd,
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            GITHUB_ACTION_PATH: ACTION_DIR,
            GITHUB_STEP_SUMMARY: summaryFile,
            ...env,
          },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout + stderr }),
      );
    });
    log += result.out;
    if (result.code !== 0)
      return { code: result.code, log, summary: await readFile(summaryFile, 'utf8'), ran };
  }
  return { code: 0, log, summary: await readFile(summaryFile, 'utf8'), ran };
}

describe('the verify-policy GitHub action, its steps run in a shell here', () => {
  let dir: string;
  let org: Org;
  const ringfence = `${process.execPath} ${cliBin}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-action-'));
    org = await makeOrg(dir);
    await mkdir(join(dir, 'policies'));
    for (const name of ['laptops', 'ci']) {
      const signed = await signPolicy(org, policyDocument({ name: `corp-${name}` }), name);
      await writeFile(join(dir, 'policies', `${name}.policy.json`), await readFile(signed));
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes when every policy the glob names verifies, says so in the step summary, and skips the build when told how to run ringfence', async () => {
    const run = await runAction({ policies: 'policies/*.policy.json', root: 'root.json', ringfence }, dir);
    expect(run.code, run.log).toBe(0);
    expect(run.ran).toEqual(['Verify the policies']);
    expect(run.log).toContain('OK policies/ci.policy.json: policy corp-ci version 1');
    expect(run.log).toContain('OK policies/laptops.policy.json: policy corp-laptops version 1');
    expect(run.summary).toContain('2 signed policies verify');
  });

  it('fails naming the file when one policy does not verify', async () => {
    const envelope = JSON.parse(await readFile(join(dir, 'policies', 'ci.policy.json'), 'utf8'));
    envelope.signatures = [];
    await writeFile(join(dir, 'bad.policy.json'), JSON.stringify(envelope));
    const run = await runAction(
      { policies: 'policies/*.policy.json\nbad.policy.json', root: 'root.json', ringfence },
      dir,
    );
    expect(run.code).toBe(1);
    expect(run.log).toMatch(/FAIL bad\.policy\.json: POLICY_SIGNATURES_INSUFFICIENT/);
    expect(run.summary).toContain('do not verify');
  });

  it('fails a policy that expires within min-days-valid (30 days here, the policies last 30)', async () => {
    const run = await runAction(
      { policies: 'policies/ci.policy.json', root: 'root.json', ringfence, 'min-days-valid': '31' },
      dir,
    );
    expect(run.code).toBe(1);
    expect(run.log).toContain('POLICY_EXPIRES_SOON');
  });

  it('fails when a glob matches nothing, rather than verifying nothing', async () => {
    const run = await runAction({ policies: 'nowhere/*.json', root: 'root.json', ringfence }, dir);
    expect(run.code).toBe(1);
    expect(run.log).toContain('no file matches nowhere/*.json');
  });

  it('an input is never run as shell: a policies value with command substitution creates nothing', async () => {
    const run = await runAction(
      {
        policies: 'policies/ci.policy.json $(touch INJECTED) `touch INJECTED2`',
        root: 'root.json',
        ringfence,
      },
      dir,
    );
    expect(run.code).toBe(1);
    expect(existsSync(join(dir, 'INJECTED'))).toBe(false);
    expect(existsSync(join(dir, 'INJECTED2'))).toBe(false);
  });
});
