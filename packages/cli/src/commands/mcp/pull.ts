import { Args } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import { pullServer, pullSummary } from '@ringfence/gateway/registration';
import { RingfenceCommand } from '../../lib/base-command.js';
import { connectEngine } from '../../lib/engine.js';
import { loadPolicyView } from '../../lib/serving.js';

export default class McpPull extends RingfenceCommand {
  static override description =
    "Fetch a contained server's image and record its new image ID: the only way ringfence pulls. An image built from an npm package (--npm) is rebuilt from the package installed on this machine instead.";

  static override examples = ['<%= config.bin %> mcp pull github'];
  static override args = { name: Args.string({ required: true, description: 'server name' }) };

  async run(): Promise<void> {
    const { args } = await this.parse(McpPull);
    const home = resolveHome();
    const result = await pullServer(args.name, {
      home,
      policy: await loadPolicyView(home),
      engine: connectEngine,
      from: process.cwd(),
      onPull: (image) => this.log(`Pulling ${image}…`),
    });
    this.log(pullSummary(result));
  }
}
