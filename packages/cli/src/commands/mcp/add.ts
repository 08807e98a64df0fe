import { Args, Command, Flags } from '@oclif/core';
import {
  type HttpServerConfig,
  resolveHome,
  ServerStore,
  validateRemoteUrl,
  validateServerName,
} from '@ringfence/gateway';
import { parseKeyValues } from '../../lib/flags.js';

export default class McpAdd extends Command {
  static override description =
    'Register an MCP server. --url registers a remote streamable-HTTP server (https, or http on loopback only). Its tools are pinned the first time the gateway sees them.';

  static override examples = [
    '<%= config.bin %> mcp add docs --url https://mcp.example.com/mcp --header "Authorization=Bearer $TOKEN"',
    '<%= config.bin %> mcp add local --url http://127.0.0.1:3001/mcp --allow-tool echo',
  ];

  static override args = {
    name: Args.string({ required: true, description: 'server name: [a-z0-9][a-z0-9-]{0,31}' }),
  };

  static override flags = {
    url: Flags.string({ description: 'streamable HTTP endpoint of a remote server', required: true }),
    header: Flags.string({ description: 'HTTP header KEY=VALUE sent to the remote server', multiple: true }),
    'allow-tool': Flags.string({ description: 'expose only these tools (repeatable)', multiple: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(McpAdd);
    let server: HttpServerConfig;
    try {
      validateServerName(args.name);
      validateRemoteUrl(flags.url);
      const headers = parseKeyValues(flags.header, '--header');
      server = {
        name: args.name,
        transport: 'http',
        url: flags.url,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(flags['allow-tool'] ? { allow_tools: flags['allow-tool'] } : {}),
      };
      await new ServerStore(resolveHome()).add(server);
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
    this.log(
      `Registered ${server.name} (remote ${new URL(server.url).host}). Its tools are pinned the first time the gateway starts: ringfence mcp tools`,
    );
  }
}
