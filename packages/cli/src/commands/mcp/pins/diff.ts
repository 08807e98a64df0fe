import { Args, Command, Flags } from '@oclif/core';
import { type DefinitionDiff, diffPending, PinStore, resolveHome } from '@ringfence/gateway';
import { formatDiff } from '../../../lib/pins-format.js';

export default class PinsDiff extends Command {
  static override description =
    'Show what changed in the withheld (pending) definitions of a server, against their pins.';
  static override examples = ['<%= config.bin %> mcp pins diff docs'];
  static override enableJsonFlag = true;
  static override args = { server: Args.string({ required: true, description: 'server name' }) };
  static override flags = {
    full: Flags.boolean({ description: 'also print each whole pending definition' }),
  };

  async run(): Promise<{ server: string; pending: DefinitionDiff[] }> {
    const { args, flags } = await this.parse(PinsDiff);
    let pending: DefinitionDiff[];
    let pins: Awaited<ReturnType<PinStore['server']>>;
    try {
      pins = await new PinStore(resolveHome()).server(args.server);
      pending = diffPending(pins);
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
    if (!this.jsonEnabled()) {
      if (pending.length === 0) this.log(`Nothing pending for ${args.server}.`);
      for (const diff of pending) {
        this.log(
          `${formatDiff(args.server, diff, { full: flags.full, before: pins?.tools[diff.tool]?.definition })}\n`,
        );
      }
      if (pending.length > 0) this.log(`Approve with: ringfence mcp pins approve ${args.server} [TOOL…]`);
    }
    return { server: args.server, pending };
  }
}
