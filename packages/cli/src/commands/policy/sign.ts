import { readFile } from 'node:fs/promises';
import { Args, Flags } from '@oclif/core';
import {
  addSignatures,
  type Envelope,
  openEnvelope,
  POLICY_PAYLOAD_TYPE,
  parseStrictJson,
  ROOT_PAYLOAD_TYPE,
  readPolicySource,
  readPrivateKeyFile,
  signPolicy,
  writeFileAtomic,
} from '@ringfence/policy';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class PolicySign extends RingfenceCommand {
  static override summary =
    'Sign a policy (YAML or JSON source) into a DSSE envelope, or add signatures to a signed file.';

  static override description =
    'The source is checked against the policy schema, converted to RFC 8785 canonical JSON and signed with every --key given. ' +
    'When SOURCE is already a signed policy or root (a DSSE envelope), the signatures of --key are added to it instead, so that ' +
    'several administrators can each sign with their own key until the threshold is met.';

  static override examples = [
    '<%= config.bin %> policy sign policies/example.policy.yaml --key keys/ci-policy.key --out policy.json',
    '<%= config.bin %> policy sign policy.json --key keys/bob-policy.key --out policy.json',
  ];

  static override args = {
    source: Args.string({
      description: 'policy source (.yaml, .yml or .json), or a signed envelope to co-sign',
      required: true,
    }),
  };

  static override flags = {
    key: Flags.string({
      description: 'private key (.key) to sign with',
      required: true,
      multiple: true,
      helpValue: 'KEY',
    }),
    out: Flags.string({
      description: 'where to write the signed envelope',
      required: true,
      helpValue: 'FILE',
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(PolicySign);
    const text = await readFile(args.source, 'utf8').catch((error: Error) =>
      this.error(`Cannot read ${args.source}: ${error.message}`, { exit: 1 }),
    );
    const keys = await Promise.all(flags.key.map(readPrivateKeyFile));
    const existing = asEnvelope(text);
    let envelope: Envelope;
    let what: string;
    if (existing) {
      const opened = openEnvelope(text, existing.payloadType);
      if (!opened.ok) this.error(`${args.source}: ${opened.message}`, { exit: 1 });
      envelope = addSignatures(opened.envelope, opened.payloadBytes, keys);
      what = existing.payloadType === ROOT_PAYLOAD_TYPE ? 'trust root' : 'policy';
    } else {
      const policy = readPolicySource(text, args.source);
      if (Date.parse(policy.expires) <= Date.now()) {
        this.warn(
          `The policy already expired at ${policy.expires}; verifiers will refuse it. Raise expires.`,
        );
      }
      envelope = signPolicy(policy, keys);
      what = `policy ${policy.name} version ${policy.version}`;
    }
    await writeFileAtomic(flags.out, `${JSON.stringify(envelope, null, 2)}\n`, { mode: 0o644 });
    this.log(
      `Signed ${what} → ${flags.out} (${envelope.signatures.length} signature${envelope.signatures.length === 1 ? '' : 's'}).`,
    );
    this.log(
      what === 'trust root'
        ? `Check it with: ringfence policy verify POLICY --root PREVIOUS_ROOT --root ${flags.out}`
        : `Check it with: ringfence policy verify ${flags.out} --root root.json`,
    );
  }
}

/** The envelope's payloadType when the text is a DSSE envelope of ours, else undefined. */
function asEnvelope(text: string): { payloadType: string } | undefined {
  try {
    const value = parseStrictJson(text) as { payloadType?: unknown };
    const type = value?.payloadType;
    return type === POLICY_PAYLOAD_TYPE || type === ROOT_PAYLOAD_TYPE ? { payloadType: type } : undefined;
  } catch {
    return undefined;
  }
}
