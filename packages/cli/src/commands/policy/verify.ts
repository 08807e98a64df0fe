import { Flags } from '@oclif/core';
import { type VerifyCode, verifyPolicyFiles } from '@ringfence/policy';
import { RingfenceCommand } from '../../lib/base-command.js';
import { policyArg, rootFlag } from '../../lib/policy-args.js';

/** What `policy verify --json` prints for one file (for several: `{ok, results: [...]}`). */
export interface PolicyVerifyJson {
  file: string;
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
  static override summary =
    'Verify signed policies against a trust root. Exit 0 when every file is valid, 1 when any is not.';

  static override description =
    'Checks the envelope, the signatures against the policy role of the root (and its threshold), then the payload: ' +
    'canonical JSON, schema, _type and expiry. Give several --root files, oldest first, to verify a key rotation. ' +
    'Nothing is read from or written to this machine’s state, so it suits CI (a ready step: .github/actions/verify-policy); failures print a reason code. ' +
    'With several files each is verified and reported; --json then prints {ok, results: [...]}.';

  static override examples = [
    '<%= config.bin %> policy verify policy.json --root root.json',
    '<%= config.bin %> policy verify policy.json --root root.json --min-days-valid 14 --json',
    '<%= config.bin %> policy verify policies/*.policy.json --root root.json --root root.v2.json',
  ];

  // Further policy files follow the first one.
  static override strict = false;

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

  async run(): Promise<PolicyVerifyJson | { ok: boolean; results: PolicyVerifyJson[] }> {
    const { args, argv, flags } = await this.parse(PolicyVerify);
    const files = [args.policy, ...(argv as string[]).slice(1)];
    const now = Date.now();
    const results: PolicyVerifyJson[] = [];
    for (const file of files) results.push(await this.verifyOne(file, flags, now));
    const ok = results.every((result) => result.ok);
    if (!ok) process.exitCode = 1;
    if (files.length > 1 && !this.jsonEnabled()) {
      this.log(`${results.filter((r) => r.ok).length} of ${files.length} policies verify.`);
    }
    return files.length === 1 ? results[0]! : { ok, results };
  }

  private async verifyOne(
    file: string,
    flags: { root: string[]; 'min-days-valid'?: number | undefined },
    now: number,
  ): Promise<PolicyVerifyJson> {
    const result = await verifyPolicyFiles({
      policyPath: file,
      rootPaths: flags.root,
      now,
      ...(flags['min-days-valid'] === undefined ? {} : { minDaysValid: flags['min-days-valid'] }),
    });
    if (!result.ok) {
      if (!this.jsonEnabled()) this.logToStderr(`FAIL ${file}: ${result.code}: ${result.message}`);
      return { file, ok: false, code: result.code, message: result.message };
    }
    const days = Math.floor((result.expiresAt - now) / 86_400_000);
    if (!this.jsonEnabled()) {
      this.log(
        `OK ${file}: policy ${result.policy.name} version ${result.policy.version}, expires ${result.policy.expires} (in ${days} days)`,
      );
      this.log(`   signed by ${result.signers.join(', ')} under trust root version ${result.root.version}`);
      this.log(`   digest ${result.digest}`);
    }
    return {
      file,
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
