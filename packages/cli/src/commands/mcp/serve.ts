import { Errors, Flags } from '@oclif/core';
import { AgentError, AgentStore } from '@ringfence/gateway/agents';
import { newSessionId, runGateway } from '@ringfence/gateway/serve';
import { type Failure, REPORT_LINE, RingfenceCommand } from '../../lib/base-command.js';
import { reportLine, type ServingDeps, servingDeps } from '../../lib/serving.js';

export default class McpServe extends RingfenceCommand {
  static override description =
    'Serve every registered server to an AI client as one MCP server: over stdio (default) or streamable HTTP (--http). Reports go to stderr; stdout belongs to the protocol.';

  static override examples = [
    '<%= config.bin %> mcp serve',
    'RINGFENCE_MCP_TOKEN=$(openssl rand -hex 32) <%= config.bin %> mcp serve --http 127.0.0.1:8765',
    '<%= config.bin %> mcp serve --only docs',
  ];

  static override flags = {
    http: Flags.string({
      description: 'serve streamable HTTP on HOST:PORT instead of stdio (bearer token required)',
    }),
    'insecure-listen': Flags.boolean({ description: 'allow --http on a non-loopback address' }),
    'session-idle': Flags.integer({
      description: '--http: close a session after this many seconds without a request [default: 1800]',
      min: 1,
      helpValue: 'SECONDS',
    }),
    'max-sessions': Flags.integer({
      description:
        "--http: sessions one token may hold; a new one ends that token's least recently used idle one [default: 32]",
      min: 1,
      helpValue: 'N',
    }),
    session: Flags.string({ description: 'session id (default: random)' }),
    only: Flags.string({
      description:
        'serve only this registered server, under its own tool and prompt names (no SERVER_ prefix): one client entry per server',
    }),
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
    const deps = await servingDeps(session, { allowMounts: flags['allow-mount'] ?? [] });
    const running = await this.start(deps, flags).catch(async (error: unknown) => {
      await deps.close();
      throw error;
    });
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

  private async start(
    deps: ServingDeps,
    flags: {
      http?: string;
      'insecure-listen'?: boolean;
      only?: string;
      'session-idle'?: number;
      'max-sessions'?: number;
    },
  ) {
    const agents = new AgentStore(deps.gatewayOptions.home);
    let stdioIdentity: { agent: string; scope: string } | undefined;
    const agentToken = process.env.RINGFENCE_AGENT_TOKEN;
    if (agentToken && !flags.http) {
      const agent = await agents.resolve(agentToken).catch(() => undefined);
      if (!agent) {
        throw new AgentError(
          'AGENT_TOKEN',
          'RINGFENCE_AGENT_TOKEN is not the token of any agent; nothing was served. See the agents with: ringfence agent ls',
        );
      }
      stdioIdentity = { agent: agent.name, scope: agent.scope };
    }
    return runGateway({
      ...deps.gatewayOptions,
      ...(flags.http ? { http: flags.http } : {}),
      ...(flags['insecure-listen'] ? { insecureListen: true } : {}),
      httpSessions: {
        ...(flags['session-idle'] ? { idleMs: flags['session-idle'] * 1000 } : {}),
        ...(flags['max-sessions'] ? { perToken: flags['max-sessions'] } : {}),
      },
      ...(flags.only !== undefined ? { only: flags.only } : {}),
      ...(process.env.RINGFENCE_MCP_TOKEN ? { httpToken: process.env.RINGFENCE_MCP_TOKEN } : {}),
      ...(stdioIdentity ? { stdioIdentity } : {}),
      resolveAgentToken: async (token) => {
        const agent = await agents.resolve(token).catch(() => undefined);
        return agent ? { agent: agent.name, scope: agent.scope } : undefined;
      },
    });
  }

  /** Like every other report of `mcp serve`, a failure is a `ringfence:` line on stderr. */
  protected override failureError(failure: Failure): Error {
    // One report line per line ringfence meant; a newline inside the message (server text) stays escaped.
    const unforeseen = failure.message.endsWith(`\n${REPORT_LINE}`);
    reportLine(
      `ringfence: ${unforeseen ? failure.message.slice(0, -REPORT_LINE.length - 1) : failure.message}`,
    );
    if (unforeseen) reportLine(`ringfence: ${REPORT_LINE}`);
    return new Errors.ExitError(failure.exit);
  }
}
