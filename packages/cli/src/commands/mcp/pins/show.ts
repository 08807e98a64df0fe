import { Args, Flags } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import {
  formatServerDefinitions,
  formatShownPins,
  INSTRUCTIONS_NAME,
  PinStore,
  type ShownPins,
  selectShown,
  showPins,
} from '@ringfence/gateway/pins';
import { RingfenceCommand } from '../../../lib/base-command.js';

export default class PinsShow extends RingfenceCommand {
  static override description =
    "Show a server's pinned and pending definitions whole: every line of each description, the input and output schemas, annotations, title, icons and every other member, and the server's instructions, as canonical JSON with hidden characters shown escaped. This is the review that matters on first sight. Without a server (or with --summary), one line per definition.";
  static override examples = [
    '<%= config.bin %> mcp pins show docs',
    '<%= config.bin %> mcp pins show docs --tool search',
    '<%= config.bin %> mcp pins show docs --prompt summarize',
    '<%= config.bin %> mcp pins show docs --instructions',
    '<%= config.bin %> mcp pins show --summary',
    '<%= config.bin %> mcp pins show docs --json',
  ];
  static override enableJsonFlag = true;
  static override args = { server: Args.string({ required: false, description: 'server name' }) };
  static override flags = {
    tool: Flags.string({ description: 'show only this tool (repeat for more)', multiple: true }),
    prompt: Flags.string({ description: 'show only this prompt (repeat for more)', multiple: true }),
    resource: Flags.string({
      description: 'show only this resource, by its URI (repeat for more)',
      multiple: true,
    }),
    template: Flags.string({
      description: 'show only this resource template, by its URI template (repeat for more)',
      multiple: true,
    }),
    instructions: Flags.boolean({
      description: "show only the server's instructions (the text it gives clients when they connect)",
    }),
    summary: Flags.boolean({
      description: 'one line per definition (the first line of its description) instead of each whole',
    }),
  };

  async run(): Promise<{ servers: ShownPins[] }> {
    const { args, flags } = await this.parse(PinsShow);
    const named = {
      tool: flags.tool ?? [],
      prompt: flags.prompt ?? [],
      resource: flags.resource ?? [],
      template: flags.template ?? [],
      instructions: flags.instructions ? [INSTRUCTIONS_NAME] : [],
    };
    const naming = Object.values(named).some((names) => names.length > 0);
    if (naming && args.server === undefined)
      this.error(
        '--tool, --prompt, --resource, --template and --instructions name definitions of one server: ringfence mcp pins show SERVER --tool NAME',
        { exit: 2 },
      );
    const store = new PinStore(resolveHome());
    const servers = (await showPins(store, args.server)).map((shown) => selectShown(shown, named));
    if (!this.jsonEnabled()) {
      const lines =
        args.server === undefined || flags.summary
          ? formatShownPins(servers)
          : formatServerDefinitions(servers[0]!);
      for (const line of lines) this.log(line);
    }
    return { servers };
  }
}
