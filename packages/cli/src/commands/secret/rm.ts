import { Args } from '@oclif/core';
import { CredentialStore } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class SecretRm extends RingfenceCommand {
  static override description =
    'Remove a stored credential (its value from the backend that holds it, and its bindings). Servers registered with @secret:NAME then fail to start until it is set again.';
  static override args = { name: Args.string({ required: true, description: 'credential name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(SecretRm);
    await new CredentialStore(resolveHome()).remove(args.name);
    this.log(`Removed credential ${args.name}.`);
  }
}
