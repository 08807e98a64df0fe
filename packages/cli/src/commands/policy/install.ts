import { readFile } from 'node:fs/promises';
import { resolveHome } from '@ringfence/gateway/home';
import {
  installedPolicyDir,
  installPolicy,
  isRingfenceError,
  RingfenceError,
  type VerifyCode,
} from '@ringfence/policy';
import { RingfenceCommand } from '../../lib/base-command.js';
import { CliError } from '../../lib/errors.js';
import { policyArg, rootFlag } from '../../lib/policy-args.js';

/** What `policy install --json` prints. */
export interface PolicyInstallJson {
  ok: boolean;
  code?: VerifyCode;
  message?: string;
  dir?: string;
  name?: string;
  version?: number;
  digest?: string;
  root_version?: number;
}

export default class PolicyInstall extends RingfenceCommand {
  static override summary = 'Verify a signed policy and install it for this machine (normally needs sudo).';

  static override description =
    'Verifies the policy and its trust root against what this machine already trusts (an older policy version, or a root that is not ' +
    'a proper rotation of the installed one, is refused), then writes policy.json, root.json and root-history/ into /etc/ringfence ' +
    '(or RINGFENCE_POLICY_DIR), owned by the current user and mode 0644. The gateway refuses files not owned by root.';

  static override examples = [
    'sudo <%= config.bin %> policy install policy.json --root root.json',
    'sudo <%= config.bin %> policy install policy.json --root root.v2.json',
  ];

  static override enableJsonFlag = true;

  static override args = {
    policy: policyArg,
  };

  static override flags = {
    root: rootFlag,
  };

  async run(): Promise<PolicyInstallJson> {
    const { args, flags } = await this.parse(PolicyInstall);
    const dir = installedPolicyDir();
    const policyText = await readFile(args.policy, 'utf8');
    const rootTexts = await Promise.all(flags.root.map((path) => readFile(path, 'utf8')));
    const result = await installPolicy({ policyText, rootTexts, dir, home: resolveHome() }).catch(
      (error: unknown) => {
        throw installFailure(error, dir);
      },
    );
    if (!result.ok) {
      process.exitCode = 1;
      if (!this.jsonEnabled()) this.logToStderr(`FAIL ${args.policy}: ${result.code}: ${result.message}`);
      return { ok: false, code: result.code, message: result.message };
    }
    if (!this.jsonEnabled()) {
      this.log(
        `Installed policy ${result.policy.name} version ${result.policy.version} (trust root version ${result.root.version}) in ${dir}.`,
      );
    }
    return {
      ok: true,
      dir,
      name: result.policy.name,
      version: result.policy.version,
      digest: result.digest,
      root_version: result.root.version,
    };
  }
}

/**
 * Writing the policy failed, typically with EACCES on /etc/ringfence without sudo: say so and how
 * to fix it, keeping the code of a coded failure.
 */
function installFailure(error: unknown, dir: string): RingfenceError {
  const message = (error as Error).message;
  const hint = /EACCES|EPERM/.test(message) ? ` Writing ${dir} needs root: run it with sudo.` : '';
  const text = `Could not install the policy: ${message}.${hint}`;
  return isRingfenceError(error)
    ? new RingfenceError(error.code, text, { cause: error })
    : new CliError('POLICY_INSTALL_FAILED', text, { cause: error });
}
