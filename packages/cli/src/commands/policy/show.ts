import { rendered } from '@ringfence/gateway/text';
import { type Policy, summarizePolicy, type VerifyCode, verifyPolicyFiles } from '@ringfence/policy';
import { RingfenceCommand } from '../../lib/base-command.js';
import { policyArg, rootFlag } from '../../lib/policy-args.js';

/** What `policy show --json` prints. */
export interface PolicyShowJson {
  ok: boolean;
  code?: VerifyCode;
  message?: string;
  digest?: string;
  signers?: string[];
  root_version?: number;
  policy?: Policy;
}

export default class PolicyShow extends RingfenceCommand {
  static override summary = 'Verify a signed policy, then summarise what it allows.';

  static override description =
    'Nothing is shown from a policy that does not verify: the same checks as `policy verify` run first.';

  static override examples = ['<%= config.bin %> policy show policy.json --root root.json'];

  static override enableJsonFlag = true;

  static override args = {
    policy: policyArg,
  };

  static override flags = {
    root: rootFlag,
  };

  async run(): Promise<PolicyShowJson> {
    const { args, flags } = await this.parse(PolicyShow);
    const now = Date.now();
    const result = await verifyPolicyFiles({ policyPath: args.policy, rootPaths: flags.root, now });
    if (!result.ok) {
      process.exitCode = 1;
      if (!this.jsonEnabled()) this.logToStderr(`FAIL ${args.policy}: ${result.code}: ${result.message}`);
      return { ok: false, code: result.code, message: result.message };
    }
    // Reasons, agent names and `when` values are the policy author's free text: one line each, rendered.
    if (!this.jsonEnabled())
      for (const line of summarizePolicy(result, now)) this.log(rendered(line, 'line'));
    return {
      ok: true,
      digest: result.digest,
      signers: result.signers,
      root_version: result.root.version,
      policy: result.policy,
    };
  }
}
