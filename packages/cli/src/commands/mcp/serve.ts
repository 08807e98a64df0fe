import { Command, Flags } from '@oclif/core';
import { AgentStore, newSessionId, runGateway } from '@ringfence/gateway';
import { reportLine, servingDeps } from '../../lib/serving.js';

export default class McpServe extends Command {
  static override description =
    'Serve every registered server to an AI client as one MCP server: over stdio (default) or streamable HTTP (--http). Reports go to stderr; stdout belongs to the protocol.';

  static override examples = [
    '<%= config.bin %> mcp serve',
    'RINGFENCE_MCP_TOKEN=$(openssl rand -hex 32) <%= config.bin %> mcp serve --http 127.0.0.1:8765',
  ];

  static override flags = {
    http: Flags.string({
      description: 'serve streamable HTTP on HOST:PORT instead of stdio (bearer token required)',
    }),
    'insecure-listen': Flags.boolean({ description: 'allow --http on a non-loopback address' }),
    session: Flags.string({ description: 'session id (default: random)' }),
    'allow-mount': Flags.string({
      description:
        'another directory mounts may come from, DIR or DIR:rw (the current directory always may, writable)',
      multiple: true,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(McpServe);
    if (flags.session !== undefined && !/^[a-z0-9][a-z0-9-]{0,31}$/.test(flags.session)) {
      this.error(
        '--session must be 1-32 lower-case letters, digits or "-" (it names containers and networks).',
        { exit: 2 },
      );
    }
    const session = flags.session ?? newSessionId();
    let deps: Awaited<ReturnType<typeof servingDeps>>;
    try {
      deps = await servingDeps(session, { allowMounts: flags['allow-mount'] ?? [] });
    } catch (error) {
      reportLine(`ringfence: ${(error as Error).message}`);
      this.exit(1);
    }
    const agents = new AgentStore(deps.gatewayOptions.home);
    let stdioIdentity: { agent: string; scope: string } | undefined;
    const agentToken = process.env.RINGFENCE_AGENT_TOKEN;
    if (agentToken && !flags.http) {
      const agent = await agents.resolve(agentToken).catch(() => undefined);
      if (!agent) {
        reportLine(
          'ringfence: RINGFENCE_AGENT_TOKEN is not the token of any agent; nothing was served. See the agents with: ringfence agent ls',
        );
        await deps.close();
        this.exit(1);
      }
      stdioIdentity = { agent: agent.name, scope: agent.scope };
    }
    let running: Awaited<ReturnType<typeof runGateway>>;
    try {
      running = await runGateway({
        ...deps.gatewayOptions,
        ...(flags.http ? { http: flags.http } : {}),
        ...(flags['insecure-listen'] ? { insecureListen: true } : {}),
        ...(process.env.RINGFENCE_MCP_TOKEN ? { httpToken: process.env.RINGFENCE_MCP_TOKEN } : {}),
        ...(stdioIdentity ? { stdioIdentity } : {}),
        resolveAgentToken: async (token) => {
          const agent = await agents.resolve(token).catch(() => undefined);
          return agent ? { agent: agent.name, scope: agent.scope } : undefined;
        },
      });
    } catch (error) {
      reportLine(`ringfence: ${(error as Error).message}`);
      await deps.close();
      this.exit(1);
    }
    // One shutdown, whoever asks first (stdin ending, SIGINT, SIGTERM): a second signal waits for
    // the same cleanup instead of exiting halfway and leaving containers behind.
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        await running.close();
        await deps.close();
      })();
      return stopping;
    };
    process.once('SIGINT', () => void stop().then(() => process.exit(130)));
    process.once('SIGTERM', () => void stop().then(() => process.exit(143)));
    await running.done;
    await stop();
  }
}
