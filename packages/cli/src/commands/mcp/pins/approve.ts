import { Args, Flags } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import {
  approveReviewed,
  assertLocalPinsCount,
  formatApprovalReview,
  INSTRUCTIONS_NAME,
  PinStore,
  reviewApproval,
} from '@ringfence/gateway/pins';
import { rendered } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../../lib/base-command.js';
import { confirm, requireTerminal } from '../../../lib/terminal.js';

export default class PinsApprove extends RingfenceCommand {
  static override description =
    'Approve withheld definitions of a server (all pending, or the named tools, --prompt prompts, --resource resources, --template templates and --instructions) after seeing them. Needs a terminal; accepts exactly the definitions shown.';
  static override examples = [
    '<%= config.bin %> mcp pins approve docs',
    '<%= config.bin %> mcp pins approve docs search',
    '<%= config.bin %> mcp pins approve docs --prompt summarize',
    "<%= config.bin %> mcp pins approve docs --template 'file:///{path}'",
    '<%= config.bin %> mcp pins approve docs --instructions',
  ];
  static override strict = false;
  static override args = {
    server: Args.string({ required: true, description: 'server name' }),
    tools: Args.string({
      required: false,
      description:
        'tool names (default: every pending definition, unless --prompt, --resource, --template or --instructions names some)',
    }),
  };
  static override flags = {
    prompt: Flags.string({ description: 'a prompt to approve (repeat for more)', multiple: true }),
    resource: Flags.string({
      description: 'a resource to approve, by its URI (repeat for more)',
      multiple: true,
    }),
    template: Flags.string({
      description: 'a resource template to approve, by its URI template (repeat for more)',
      multiple: true,
    }),
    instructions: Flags.boolean({
      description: "approve the server's instructions (the text it gives clients when they connect)",
    }),
  };

  async run(): Promise<void> {
    const { args, argv, flags } = await this.parse(PinsApprove);
    requireTerminal('Approving a pin');
    const home = resolveHome();
    await assertLocalPinsCount(args.server, { home });
    const store = new PinStore(home);
    const review = await reviewApproval(store, args.server, {
      tool: (argv as string[]).slice(1),
      prompt: flags.prompt ?? [],
      resource: flags.resource ?? [],
      template: flags.template ?? [],
      instructions: flags.instructions ? [INSTRUCTIONS_NAME] : [],
    });
    if (review.pending.length === 0) {
      this.log(`Nothing pending for ${args.server}.`);
      return;
    }
    for (const block of formatApprovalReview(review)) this.log(block);
    if (!(await confirm(`Approve these ${review.pending.length} definition(s) of ${args.server}?`))) {
      this.log('Nothing approved.');
      return;
    }
    const approved = await approveReviewed(store, review);
    const names = approved.map((d) =>
      d.kind === 'tool'
        ? rendered(d.name, 'name')
        : d.kind === 'instructions'
          ? 'its instructions'
          : `${d.kind} ${rendered(d.name, 'name')}`,
    );
    this.log(
      `Approved ${names.join(', ')}. A running gateway exposes them after its next re-list or restart.`,
    );
  }
}
