import { Args } from '@oclif/core';
import { AgentStore } from '@ringfence/gateway/agents';
import { resolveHome } from '@ringfence/gateway/home';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class AgentRm extends RingfenceCommand {
  static override description = 'Remove an agent identity; its token stops working at the next request.';
  static override args = { name: Args.string({ required: true, description: 'agent name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(AgentRm);
    await new AgentStore(resolveHome()).remove(args.name);
    this.log(`Removed agent ${args.name}.`);
  }
}
