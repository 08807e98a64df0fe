import { Args } from '@oclif/core';
import { ServerStore } from '@ringfence/gateway/config';
import { CredentialStore } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import { PinStore, resetPins } from '@ringfence/gateway/pins';
import { OAuthTokenStore } from '@ringfence/gateway/remote-auth';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class McpRm extends RingfenceCommand {
  static override description = 'Remove a registered server, its pins and its OAuth tokens.';
  static override examples = ['<%= config.bin %> mcp rm docs'];
  static override args = { name: Args.string({ required: true, description: 'server name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(McpRm);
    const home = resolveHome();
    await new ServerStore(home).remove(args.name);
    await resetPins(new PinStore(home), args.name);
    // Its tokens belong to this registration only: a later one of the same name starts logged out.
    const hadTokens = await new OAuthTokenStore(home).forget(args.name);
    // A server of the same name registered later must be bound again, deliberately.
    const unbound = await new CredentialStore(home, 'auto').unbindServer(args.name);
    this.log(
      `Removed ${args.name} and its pins${hadTokens ? ' and forgot its OAuth tokens (not revoked: ringfence mcp auth logout revokes)' : ''}.${unbound.length > 0 ? ` Credentials no longer bound to it: ${unbound.join(', ')}.` : ''}`,
    );
  }
}
