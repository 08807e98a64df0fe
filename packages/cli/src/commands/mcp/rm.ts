import { Args } from '@oclif/core';
import { ServerStore } from '@ringfence/gateway/config';
import { CredentialStore } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import { PinStore, resetPins } from '@ringfence/gateway/pins';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class McpRm extends RingfenceCommand {
  static override description = 'Remove a registered server and its pins.';
  static override examples = ['<%= config.bin %> mcp rm docs'];
  static override args = { name: Args.string({ required: true, description: 'server name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(McpRm);
    const home = resolveHome();
    await new ServerStore(home).remove(args.name);
    await resetPins(new PinStore(home), args.name);
    // A server of the same name registered later must be bound again, deliberately.
    const unbound = await new CredentialStore(home, 'auto').unbindServer(args.name);
    this.log(
      `Removed ${args.name} and its pins.${unbound.length > 0 ? ` Credentials no longer bound to it: ${unbound.join(', ')}.` : ''}`,
    );
  }
}
