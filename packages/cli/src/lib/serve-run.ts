import { AgentError, AgentStore } from '@ringfence/gateway/agents';
import type { GatewayMetrics } from '@ringfence/gateway/metrics';
import { newSessionId, startupMark } from '@ringfence/gateway/startup';
import { parseByteSize } from './byte-size.js';
import { type Failure, REPORT_LINE } from './failure.js';
import { reportLine, type ServingDeps, servingDeps } from './serving.js';

/** `mcp serve`'s flags as parsed (serve-flags.ts declares them for oclif). */
export interface ServeFlags {
  http?: string | undefined;
  'insecure-listen'?: boolean | undefined;
  'session-idle'?: number | undefined;
  'max-sessions'?: number | undefined;
  session?: string | undefined;
  only?: string | undefined;
  'allow-mount'?: string[] | undefined;
  'sandbox-tools'?: boolean | undefined;
  'sandbox-image'?: string[] | undefined;
  'sandbox-save-cap'?: string | undefined;
  'sandbox-persistent'?: boolean | undefined;
  sandbox?: string | undefined;
  'sandbox-allow-address'?: string[] | undefined;
  metrics?: string | undefined;
}

/**
 * `mcp serve` after its flags were parsed, for the oclif command and the bundled fast path alike.
 * The servers' dependencies come first (policy check, audit log, schema workers and, when a
 * container server is registered, the container runtime: engine probe, reaper, sweep) and only
 * then is the served endpoint's code loaded, so that what the engine, the reaper process and the
 * schema workers do runs beside that loading (docs/architecture.md, "Start-up").
 */
export async function runServe(flags: ServeFlags): Promise<void> {
  const session = flags.session ?? newSessionId();
  let stdioIdentity: StdioIdentity | undefined;
  let agents: AgentStore | undefined;
  // Made before anything it counts: the audit log and the container runtime report to it from their start.
  const metrics = flags.metrics
    ? new (await import('@ringfence/gateway/metrics')).GatewayMetrics()
    : undefined;
  const deps = await servingDeps(session, {
    ...(metrics ? { metrics } : {}),
    allowMounts: flags['allow-mount'] ?? [],
    auditExport: true,
    ...(flags.only !== undefined ? { only: flags.only } : {}),
    ...(flags['sandbox-tools']
      ? {
          sandboxImages: flags['sandbox-image'] ?? [],
          sandboxAddresses: flags['sandbox-allow-address'] ?? [],
        }
      : {}),
    ...(flags['sandbox-save-cap'] !== undefined
      ? { sandboxSaveCap: parseByteSize(flags['sandbox-save-cap'])! }
      : {}),
    ...(flags['sandbox-persistent'] ? { sandboxPersistent: true } : {}),
    ...(flags.sandbox !== undefined ? { sandbox: flags.sandbox } : {}),
    // Before any container is begun: an unknown agent token serves, and starts, nothing.
    admit: async (home) => {
      agents = new AgentStore(home);
      stdioIdentity = await stdioIdentityOf(agents, flags);
    },
  });
  const running = await start(deps, flags, agents!, stdioIdentity, metrics).catch(async (error: unknown) => {
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

type StdioIdentity = { agent: string; scope: string };

/** The stdio caller's identity from RINGFENCE_AGENT_TOKEN; a token of no agent is refused. */
async function stdioIdentityOf(agents: AgentStore, flags: ServeFlags): Promise<StdioIdentity | undefined> {
  const agentToken = process.env.RINGFENCE_AGENT_TOKEN;
  if (!agentToken || flags.http) return undefined;
  const agent = await agents.resolve(agentToken).catch(() => undefined);
  if (!agent) {
    throw new AgentError(
      'AGENT_TOKEN',
      'RINGFENCE_AGENT_TOKEN is not the token of any agent; nothing was served. See the agents with: ringfence agent ls',
    );
  }
  return { agent: agent.name, scope: agent.scope };
}

async function start(
  deps: ServingDeps,
  flags: ServeFlags,
  agents: AgentStore,
  stdioIdentity: StdioIdentity | undefined,
  metrics: GatewayMetrics | undefined,
) {
  // Loading the endpoint's code holds this thread for a while, and each step of a container's
  // start (probe, sweep, create, attach, start) waits for the one before: the containers' starts
  // are sent first, and the code loads while the engine starts them and the servers boot.
  // (Without container servers this settles at once.)
  await deps.containersUnderWay();
  await new Promise((resolve) => setImmediate(resolve));
  const { runGateway } = await import('@ringfence/gateway/serve');
  startupMark('serve: endpoint code loaded');
  return runGateway({
    ...deps.gatewayOptions,
    ...(flags.http ? { http: flags.http } : {}),
    ...(flags['insecure-listen'] ? { insecureListen: true } : {}),
    httpSessions: {
      ...(flags['session-idle'] ? { idleMs: flags['session-idle'] * 1000 } : {}),
      ...(flags['max-sessions'] ? { perToken: flags['max-sessions'] } : {}),
    },
    ...(flags.only !== undefined ? { only: flags.only } : {}),
    ...(metrics && flags.metrics ? { metrics: { address: flags.metrics, registry: metrics } } : {}),
    ...(process.env.RINGFENCE_MCP_TOKEN ? { httpToken: process.env.RINGFENCE_MCP_TOKEN } : {}),
    ...(stdioIdentity ? { stdioIdentity } : {}),
    resolveAgentToken: async (token) => {
      const agent = await agents.resolve(token).catch(() => undefined);
      return agent ? { agent: agent.name, scope: agent.scope } : undefined;
    },
  });
}

/** Like every other report of `mcp serve`, a failure is a `ringfence:` line on stderr. */
export function reportServeFailure(failure: Failure): void {
  // One report line per line ringfence meant; a newline inside the message (server text) stays escaped.
  const unforeseen = failure.message.endsWith(`\n${REPORT_LINE}`);
  reportLine(
    `ringfence: ${unforeseen ? failure.message.slice(0, -REPORT_LINE.length - 1) : failure.message}`,
  );
  if (unforeseen) reportLine(`ringfence: ${REPORT_LINE}`);
}
