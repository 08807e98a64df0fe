import { Args, Command } from '@oclif/core';
import { PinStore, resetPins, resolveHome } from '@ringfence/gateway';
import { orgPinRefusal } from '../../../lib/policy-pins.js';
import { confirm, requireTerminal } from '../../../lib/terminal.js';

export default class PinsReset extends Command {
  static override description =
    'Forget every pin of a server: its next start pins whatever it then lists (trust on first use again). Needs a terminal.';
  static override examples = ['<%= config.bin %> mcp pins reset docs'];
  static override args = { server: Args.string({ required: true, description: 'server name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(PinsReset);
    const notTerminal = requireTerminal('Resetting pins');
    if (notTerminal) this.error(notTerminal, { exit: 1 });
    const orgManaged = await orgPinRefusal(args.server);
    if (orgManaged) this.error(orgManaged, { exit: 1 });
    if (!(await confirm(`Forget all pins of ${args.server}? Its next start trusts whatever it lists.`))) {
      this.log('Nothing changed.');
      return;
    }
    const existed = await resetPins(new PinStore(resolveHome()), args.server);
    this.log(existed ? `Pins of ${args.server} forgotten.` : `${args.server} had no pins.`);
  }
}
