import { PassThrough } from 'node:stream';
import { Flags } from '@oclif/core';
import { descriptionSummary } from '@ringfence/gateway/pins';
import { newSessionId, runGateway, type WithheldEntry, withheldReason } from '@ringfence/gateway/serve';
import { rendered } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';
import { servingDeps } from '../../lib/serving.js';

interface ToolRow {
  name: string;
  server: string;
  description: string;
}

/** The first line of a description for one line of output, saying what it leaves out. */
const firstLine = (text: string) => descriptionSummary(text, 100);

export default class McpTools extends RingfenceCommand {
  static override description =
    'Start every registered server as `mcp serve` would, and list the tools and prompts a client would see and the ones withheld (with why).';

  static override examples = [
    '<%= config.bin %> mcp tools',
    '<%= config.bin %> mcp tools --json',
    '<%= config.bin %> mcp tools --sandbox-tools',
  ];
  static override enableJsonFlag = true;
  static override flags = {
    'sandbox-tools': Flags.boolean({
      description:
        "also list ringfence's own tools, as `mcp serve --sandbox-tools` serves them (docs/sandboxes.md)",
    }),
  };

  async run(): Promise<{
    tools: ToolRow[];
    prompts: ToolRow[];
    resources: ToolRow[];
    templates: ToolRow[];
    withheld: WithheldEntry[];
  }> {
    const { flags } = await this.parse(McpTools);
    const session = newSessionId();
    // Listing them needs no image: none is made.
    const deps = await servingDeps(session, flags['sandbox-tools'] ? { sandboxImages: [] } : {});
    // No client: the endpoint reads from a stream that ends at once.
    const stdin = new PassThrough();
    stdin.end();
    try {
      const running = await runGateway({
        ...deps.gatewayOptions,
        stdin,
        stdout: new PassThrough(),
      });
      const row = (kind: 'tool' | 'prompt') => (item: Record<string, unknown>) => ({
        name: String(item.name),
        server: running.gateway.serverOf(kind, String(item.name)) ?? '',
        description: String(item.description ?? ''),
      });
      const tools = running.gateway.listTools().map(row('tool'));
      const prompts = running.gateway.listPrompts().map(row('prompt'));
      // Resources and templates by the URI (template) a client reads them by.
      const byUri = (key: 'uri' | 'uriTemplate') => (item: Record<string, unknown>) => ({
        name: String(item[key]),
        server:
          (key === 'uri'
            ? running.gateway.serverOf('resource', String(item.uri))
            : running.gateway.resources.template(String(item.uriTemplate))?.server) ?? '',
        description: String(item.description ?? ''),
      });
      const resources = running.gateway.resources.listResources().map(byUri('uri'));
      const templates = running.gateway.resources.listTemplates().map(byUri('uriTemplate'));
      const withheld = running.gateway.withheld().filter((w) => w.kind !== 'filtered');
      await running.close();
      if (!this.jsonEnabled()) {
        for (const tool of tools) this.log(`${rendered(tool.name, 'name')}  ${firstLine(tool.description)}`);
        for (const prompt of prompts)
          this.log(`prompt ${rendered(prompt.name, 'name')}  ${firstLine(prompt.description)}`);
        for (const [kind, items] of [
          ['resource', resources],
          ['template', templates],
        ] as const) {
          for (const item of items)
            this.log(`${kind} ${rendered(item.name, 'line')}  ${firstLine(item.description)}`);
        }
        for (const w of withheld) {
          const what =
            w.definition === 'tool'
              ? rendered(w.tool, 'name')
              : `${w.definition} ${rendered(w.tool, 'name')}`;
          this.log(
            `withheld  ${rendered(w.server, 'name')}/${what}: ${withheldReason(w)}${w.digest ? ` (${w.digest})` : ''}`,
          );
        }
        if (tools.length + prompts.length + resources.length + templates.length + withheld.length === 0)
          this.log('No tools.');
        else
          this.log(
            '(first lines only; each whole definition, schemas and annotations included: ringfence mcp pins show SERVER)',
          );
      }
      return { tools, prompts, resources, templates, withheld };
    } finally {
      await deps.close();
    }
  }
}
