import { Args } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import { assertLocalPinsCount, PinStore, resetPins } from '@ringfence/gateway/pins';
import { RingfenceCommand } from '../../../lib/base-command.js';
import { confirm, requireTerminal } from '../../../lib/terminal.js';

export default class PinsReset extends RingfenceCommand {
  static override description =
    'Forget every pin of a server: its next start pins whatever it then lists (trust on first use again). Needs a terminal.';
  static override examples = ['<%= config.bin %> mcp pins reset docs'];
  static override args = { server: Args.string({ required: true, description: 'server name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(PinsReset);
    requireTerminal('Resetting pins');
    const home = resolveHome();
    await assertLocalPinsCount(args.server, { home });
    if (!(await confirm(`Forget all pins of ${args.server}? Its next start trusts whatever it lists.`))) {
      this.log('Nothing changed.');
      return;
    }
    const existed = await resetPins(new PinStore(home), args.server);
    this.log(existed ? `Pins of ${args.server} forgotten.` : `${args.server} had no pins.`);
  }
}
