import { Flags } from '@oclif/core';
import { generateKeyPair, writeKeyPair } from '@ringfence/policy';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class PolicyKeygen extends RingfenceCommand {
  static override summary = 'Generate an Ed25519 signing key pair for policies or the trust root.';

  static override description =
    'Writes PATH.key (the private seed, mode 0600; keep it offline) and PATH.pub (share it; `policy root init` takes it). Prints the keyid, the SHA-256 of the public key.';

  static override examples = ['<%= config.bin %> policy keygen --out keys/alice-root'];

  static override flags = {
    out: Flags.string({
      description: 'path prefix: writes PATH.key and PATH.pub',
      required: true,
      helpValue: 'PATH',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(PolicyKeygen);
    const written = await writeKeyPair(flags.out, generateKeyPair());
    this.log(written.keyid);
    this.logToStderr(`Wrote ${written.key} (private, mode 0600) and ${written.pub} (public).`);
  }
}
