import { Args, Command } from '@oclif/core';
import { approvePending, diffPending, PinStore, resolveHome } from '@ringfence/gateway';
import { formatDiff } from '../../../lib/pins-format.js';
import { orgPinRefusal } from '../../../lib/policy-pins.js';
import { confirm, requireTerminal } from '../../../lib/terminal.js';

export default class PinsApprove extends Command {
  static override description =
    'Approve withheld definitions of a server (all pending, or the named tools) after seeing them. Needs a terminal; accepts exactly the definitions shown.';
  static override examples = [
    '<%= config.bin %> mcp pins approve docs',
    '<%= config.bin %> mcp pins approve docs search',
  ];
  static override strict = false;
  static override args = {
    server: Args.string({ required: true, description: 'server name' }),
    tools: Args.string({ required: false, description: 'tool names (default: every pending tool)' }),
  };

  async run(): Promise<void> {
    const { args, argv } = await this.parse(PinsApprove);
    const notTerminal = requireTerminal('Approving a pin');
    if (notTerminal) this.error(notTerminal, { exit: 1 });
    const orgManaged = await orgPinRefusal(args.server);
    if (orgManaged) this.error(orgManaged, { exit: 1 });
    const store = new PinStore(resolveHome());
    const wanted = (argv as string[]).slice(1);
    const pins = await store.server(args.server);
    const pending = diffPending(pins);
    const chosen = wanted.length > 0 ? pending.filter((d) => wanted.includes(d.tool)) : pending;
    const missing = wanted.filter((tool) => !pending.some((d) => d.tool === tool));
    if (missing.length > 0) {
      this.error(
        `Nothing pending for ${missing.join(', ')} of ${args.server}. See what is pending: ringfence mcp pins diff ${args.server}`,
        { exit: 1 },
      );
    }
    if (chosen.length === 0) {
      this.log(`Nothing pending for ${args.server}.`);
      return;
    }
    // Approval accepts the whole pending definition, so the whole definition is shown.
    for (const diff of chosen) {
      this.log(
        `${formatDiff(args.server, diff, { full: true, before: pins?.tools[diff.tool]?.definition })}\n`,
      );
    }
    if (!(await confirm(`Approve these ${chosen.length} definition(s) of ${args.server}?`))) {
      this.log('Nothing approved.');
      return;
    }
    try {
      const approved = await approvePending(
        store,
        args.server,
        new Map(chosen.map((d) => [d.tool, d.newDigest])),
      );
      this.log(
        `Approved ${approved.join(', ')}. A running gateway exposes them after its next re-list or restart.`,
      );
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
  }
}
