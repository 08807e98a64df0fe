import { readFile, stat } from 'node:fs/promises';
import { Flags } from '@oclif/core';
import {
  buildRoot,
  parseDateTime,
  readPrivateKeyFile,
  readPublicKeyFile,
  signRoot,
  verifyRootChain,
  writeFileAtomic,
} from '@ringfence/policy';
import { RingfenceCommand } from '../../../lib/base-command.js';

export default class PolicyRootInit extends RingfenceCommand {
  static override summary = 'Create and sign a trust root (root.json), or the next version of one.';

  static override description =
    'The trust root lists the keys allowed to sign policies (policy role) and to sign the next root (root role), each with a threshold. ' +
    'Version 1 must be signed by a threshold of its own root keys. To rotate keys, pass --previous with the current root: the new root ' +
    'gets the next version and must be signed by a threshold of the old root keys and of the new ones. The file is verified before it is written.';

  static override examples = [
    '<%= config.bin %> policy root init --root-key keys/alice-root.pub --root-threshold 1 --policy-key keys/ci-policy.pub --policy-threshold 1 --expires 2027-12-31 --sign keys/alice-root.key --out root.json',
    '<%= config.bin %> policy root init --previous root.json --root-key keys/bob-root.pub --root-threshold 1 --policy-key keys/ci-policy.pub --policy-threshold 1 --expires 2028-12-31 --sign keys/alice-root.key --sign keys/bob-root.key --out root.v2.json',
  ];

  static override flags = {
    'root-key': Flags.string({
      description: 'public key (.pub) of the root role',
      required: true,
      multiple: true,
      helpValue: 'PUB',
    }),
    'root-threshold': Flags.integer({
      description: 'signatures needed from root keys',
      required: true,
      min: 1,
    }),
    'policy-key': Flags.string({
      description: 'public key (.pub) allowed to sign policies',
      required: true,
      multiple: true,
      helpValue: 'PUB',
    }),
    'policy-threshold': Flags.integer({
      description: 'signatures needed on a policy',
      required: true,
      min: 1,
    }),
    expires: Flags.string({
      description: 'expiry: YYYY-MM-DD (midnight UTC) or an RFC 3339 date-time',
      required: true,
      helpValue: 'DATE',
    }),
    sign: Flags.string({
      description: 'private key (.key) to sign with',
      required: true,
      multiple: true,
      helpValue: 'KEY',
    }),
    out: Flags.string({ description: 'where to write the signed root', required: true, helpValue: 'FILE' }),
    force: Flags.boolean({ description: 'replace --out if it already exists', default: false }),
    partial: Flags.boolean({
      description:
        'write the root even if its signatures do not meet the thresholds yet; other signers add theirs with `policy sign FILE --key KEY --out FILE`',
      default: false,
    }),
    previous: Flags.string({
      description: 'the current root.json, when making its next version (key rotation)',
      helpValue: 'ROOT',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(PolicyRootInit);
    const expires = normaliseDate(flags.expires);
    if (!expires)
      this.error(`--expires ${flags.expires} is not a date; use YYYY-MM-DD or 2027-12-31T00:00:00Z.`, {
        exit: 2,
      });
    if (!flags.force && (await exists(flags.out))) {
      this.error(
        `${flags.out} already exists. Machines that trust it accept only its next version: rotate with --previous ${flags.out} --out NEW_FILE, or pass --force to replace it.`,
        { exit: 1 },
      );
    }
    const now = Date.now();
    const previousText = flags.previous ? await readFile(flags.previous, 'utf8') : undefined;
    let version = 1;
    if (previousText !== undefined) {
      const previous = verifyRootChain([previousText], { now: 0 });
      if (!previous.ok)
        this.error(`--previous ${flags.previous} does not verify (${previous.code}): ${previous.message}`, {
          exit: 1,
        });
      version = previous.root.version + 1;
    }
    const rootKeys = await Promise.all(flags['root-key'].map(readPublicKeyFile));
    const policyKeys = await Promise.all(flags['policy-key'].map(readPublicKeyFile));
    const signers = await Promise.all(flags.sign.map(readPrivateKeyFile));
    const payload = buildRoot({
      version,
      expires,
      rootKeys: rootKeys.map((k) => k.publicKey),
      rootThreshold: flags['root-threshold'],
      policyKeys: policyKeys.map((k) => k.publicKey),
      policyThreshold: flags['policy-threshold'],
    });
    const text = `${JSON.stringify(signRoot(payload, signers), null, 2)}\n`;
    const check = verifyRootChain(previousText === undefined ? [text] : [previousText, text], { now });
    const unsigned =
      !check.ok && (check.code === 'ROOT_SIGNATURES_INSUFFICIENT' || check.code === 'ROOT_ROTATION_UNSIGNED');
    if (!check.ok && !(unsigned && flags.partial)) {
      this.error(`The new root would not verify (${check.code}): ${check.message}`, { exit: 1 });
    }
    if (!check.ok) {
      this.warn(
        `${flags.out} is not valid yet (${check.code}): ${check.message} Each other signer runs: ringfence policy sign ${flags.out} --key KEY --out ${flags.out}`,
      );
    }
    await writeFileAtomic(flags.out, text, { mode: 0o644 });
    this.log(`Wrote ${flags.out}: trust root version ${version}, expires ${expires}.`);
    this.log(`  root role:   ${payload.roles.root.threshold} of ${payload.roles.root.keyids.join(', ')}`);
    this.log(`  policy role: ${payload.roles.policy.threshold} of ${payload.roles.policy.keyids.join(', ')}`);
  }
}

function normaliseDate(text: string): string | undefined {
  const full = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text;
  const ms = parseDateTime(full);
  return ms === undefined ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
