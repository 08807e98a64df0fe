import { Args, Flags } from '@oclif/core';
import { AgentStore } from '@ringfence/gateway/agents';
import { resolveHome } from '@ringfence/gateway/home';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class AgentAdd extends RingfenceCommand {
  static override description =
    'Create an agent identity with a scope. Its token is printed once and only its SHA-256 is stored: give it to the agent as RINGFENCE_AGENT_TOKEN (stdio) or as its bearer token (--http).';
  static override examples = ['<%= config.bin %> agent add ci-bot --scope contractors'];
  static override args = { name: Args.string({ required: true, description: 'agent name' }) };
  static override flags = {
    scope: Flags.string({ required: true, description: 'scope that organisation rules can match' }),
  };
  static override enableJsonFlag = true;

  async run(): Promise<{ name: string; scope: string; token: string }> {
    const { args, flags } = await this.parse(AgentAdd);
    const token = await new AgentStore(resolveHome()).add(args.name, flags.scope);
    if (!this.jsonEnabled()) {
      this.log(token);
      this.logToStderr(
        `Agent ${args.name} (scope ${flags.scope}) created. The token above is shown once; store it now.`,
      );
    }
    return { name: args.name, scope: flags.scope, token };
  }
}
