import { Args, Flags } from '@oclif/core';
import { CredentialStore } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import { RingfenceCommand } from '../../lib/base-command.js';
import { bindList } from './set.js';

export default class SecretUnbind extends RingfenceCommand {
  static override description =
    'Stop a stored credential from being given to these servers (a server registered with it then fails to start until it is bound again).';
  static override examples = ['<%= config.bin %> secret unbind github-token --server github,github-ci'];
  static override args = {
    name: Args.string({ required: true, description: 'credential name' }),
  };

  static override flags = {
    server: Flags.string({ required: true, description: 'SERVER[,SERVER]: registered server names' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SecretUnbind);
    const record = await new CredentialStore(resolveHome()).bind(args.name, bindList(flags.server), true);
    this.log(
      `${args.name} is bound to: ${record.bound_to.length > 0 ? record.bound_to.join(', ') : 'no server'}.`,
    );
  }
}
