import { Args, Flags } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import { type DefinitionDiff, formatPendingReview, PinStore, reviewPending } from '@ringfence/gateway/pins';
import { RingfenceCommand } from '../../../lib/base-command.js';

export default class PinsDiff extends RingfenceCommand {
  static override description =
    'Show what changed in the withheld (pending) definitions of a server, against their pins.';
  static override examples = ['<%= config.bin %> mcp pins diff docs'];
  static override enableJsonFlag = true;
  static override args = { server: Args.string({ required: true, description: 'server name' }) };
  static override flags = {
    full: Flags.boolean({ description: 'also print each whole pending definition' }),
  };

  async run(): Promise<{ server: string; pending: readonly DefinitionDiff[] }> {
    const { args, flags } = await this.parse(PinsDiff);
    const review = await reviewPending(new PinStore(resolveHome()), args.server);
    if (!this.jsonEnabled()) for (const line of formatPendingReview(review, flags)) this.log(line);
    return { server: args.server, pending: review.pending };
  }
}
