import { Flags } from '@oclif/core';
import { type VerifyCode, verifyPolicyFiles } from '@ringfence/policy';
import { RingfenceCommand } from '../../lib/base-command.js';
import { policyArg, rootFlag } from '../../lib/policy-args.js';

/** What `policy verify --json` prints. */
export interface PolicyVerifyJson {
  ok: boolean;
  code?: VerifyCode;
  message?: string;
  name?: string;
  version?: number;
  digest?: string;
  signers?: string[];
  expires?: string;
  days_valid?: number;
  root_version?: number;
}

export default class PolicyVerify extends RingfenceCommand {
  static override summary = 'Verify a signed policy against a trust root. Exit 0 when valid, 1 when not.';

  static override description =
    'Checks the envelope, the signatures against the policy role of the root (and its threshold), then the payload: ' +
    'canonical JSON, schema, _type and expiry. Give several --root files, oldest first, to verify a key rotation. ' +
    'Nothing is read from or written to this machine’s state, so it suits CI; failures print a reason code.';

  static override examples = [
    '<%= config.bin %> policy verify policy.json --root root.json',
    '<%= config.bin %> policy verify policy.json --root root.json --min-days-valid 14 --json',
  ];

  static override enableJsonFlag = true;

  static override args = {
    policy: policyArg,
  };

  static override flags = {
    root: rootFlag,
    'min-days-valid': Flags.integer({
      description: 'fail if the policy expires within N days',
      min: 0,
      helpValue: 'N',
    }),
  };

  async run(): Promise<PolicyVerifyJson> {
    const { args, flags } = await this.parse(PolicyVerify);
    const now = Date.now();
    const result = await verifyPolicyFiles({
      policyPath: args.policy,
      rootPaths: flags.root,
      now,
      ...(flags['min-days-valid'] === undefined ? {} : { minDaysValid: flags['min-days-valid'] }),
    });
    if (!result.ok) {
      process.exitCode = 1;
      if (!this.jsonEnabled()) this.logToStderr(`FAIL ${args.policy}: ${result.code}: ${result.message}`);
      return { ok: false, code: result.code, message: result.message };
    }
    const days = Math.floor((result.expiresAt - now) / 86_400_000);
    if (!this.jsonEnabled()) {
      this.log(
        `OK ${args.policy}: policy ${result.policy.name} version ${result.policy.version}, expires ${result.policy.expires} (in ${days} days)`,
      );
      this.log(`   signed by ${result.signers.join(', ')} under trust root version ${result.root.version}`);
      this.log(`   digest ${result.digest}`);
    }
    return {
      ok: true,
      name: result.policy.name,
      version: result.policy.version,
      digest: result.digest,
      signers: result.signers,
      expires: result.policy.expires,
      days_valid: days,
      root_version: result.root.version,
    };
  }
}
