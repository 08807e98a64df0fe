import { PassThrough } from 'node:stream';
import { newSessionId, runGateway, type WithheldEntry } from '@ringfence/gateway/serve';
import { clip, rendered } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';
import { servingDeps } from '../../lib/serving.js';

interface ToolRow {
  name: string;
  server: string;
  description: string;
}

export default class McpTools extends RingfenceCommand {
  static override description =
    'Start every registered server as `mcp serve` would, and list the tools a client would see and the ones withheld (with why).';

  static override examples = ['<%= config.bin %> mcp tools', '<%= config.bin %> mcp tools --json'];
  static override enableJsonFlag = true;

  async run(): Promise<{ tools: ToolRow[]; withheld: WithheldEntry[] }> {
    await this.parse(McpTools);
    const session = newSessionId();
    const deps = await servingDeps(session);
    // No client: the endpoint reads from a stream that ends at once.
    const stdin = new PassThrough();
    stdin.end();
    try {
      const running = await runGateway({
        ...deps.gatewayOptions,
        stdin,
        stdout: new PassThrough(),
      });
      const tools = running.gateway.listTools().map((tool) => ({
        name: String(tool.name),
        server: String(tool.name).split('_')[0] ?? '',
        description: String(tool.description ?? ''),
      }));
      const withheld = running.gateway.withheld().filter((w) => w.kind !== 'filtered');
      await running.close();
      if (!this.jsonEnabled()) {
        for (const tool of tools) {
          const summary = clip(tool.description.split('\n')[0] ?? '', 100);
          this.log(`${rendered(tool.name, 'name')}  ${rendered(summary, 'line')}`);
        }
        for (const w of withheld)
          this.log(
            `withheld  ${rendered(w.server, 'name')}/${rendered(w.tool, 'name')}: ${rendered(w.reason, 'line')}${w.digest ? ` (${w.digest})` : ''}`,
          );
        if (tools.length === 0 && withheld.length === 0) this.log('No tools.');
      }
      return { tools, withheld };
    } finally {
      await deps.close();
    }
  }
}
