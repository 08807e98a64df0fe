import { Args } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import { formatShownPins, PinStore, type ShownPins, showPins } from '@ringfence/gateway/pins';
import { RingfenceCommand } from '../../../lib/base-command.js';

export default class PinsShow extends RingfenceCommand {
  static override description =
    'Show pinned tool and prompt definitions (and pending ones awaiting review) for one server or all.';
  static override examples = [
    '<%= config.bin %> mcp pins show',
    '<%= config.bin %> mcp pins show docs --json',
  ];
  static override enableJsonFlag = true;
  static override args = { server: Args.string({ required: false, description: 'server name' }) };

  async run(): Promise<{ servers: ShownPins[] }> {
    const { args } = await this.parse(PinsShow);
    const servers = await showPins(new PinStore(resolveHome()), args.server);
    if (!this.jsonEnabled()) for (const line of formatShownPins(servers)) this.log(line);
    return { servers };
  }
}
