import { Args, Command } from '@oclif/core';
import { AgentStore, resolveHome } from '@ringfence/gateway';

export default class AgentRm extends Command {
  static override description = 'Remove an agent identity; its token stops working at the next request.';
  static override args = { name: Args.string({ required: true, description: 'agent name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(AgentRm);
    try {
      await new AgentStore(resolveHome()).remove(args.name);
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
    this.log(`Removed agent ${args.name}.`);
  }
}
