import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';
import { resolveSecretReferences } from '../credentials/references.js';
import { CredentialStore } from '../credentials/store.js';
import { findSidecarImage } from '../images/sidecar.js';
import type { AuditSink } from '../ports/audit.js';
import type { RuntimeObserver } from '../ports/observer.js';
import type { PolicyView } from '../ports/policy.js';
import type { ContainedServer, ContainerLauncher } from '../ports/upstream.js';
import { redactedLine } from '../text/redact.js';
import { startupMark } from '../util/startup.js';
import { DockerContainedServer, type StartHooks } from './contained-server.js';
import { EgressAuditor } from './egress-audit.js';
import { createDockerClient, type EngineInfo, probeEngine, resolveEngineEndpoint } from './engine.js';
import { currentOwner } from './labels.js';
import type { WorkspaceRoot } from './mounts.js';
import { type PrefetchedImages, prefetchImages } from './prefetched-images.js';
import { type ContainerProcessLimits, containerProcessLimits, hostHardLimitsFor } from './process-limits.js';
import { reaperLogPath, startReaper } from './reaper.js';
import { type SweepReport, sweepDeadGateways } from './sweep.js';

/** The parts of a started runtime that other containers of this gateway reuse (sandboxes). */
export interface SharedEngine {
  readonly docker: Docker;
  readonly session: string;
  readonly engine: EngineInfo;
  readonly processLimits: ContainerProcessLimits;
  /** The egress sidecar image; undefined when none is built. */
  readonly sidecarImage: string | undefined;
  /** One proxy stdout line of a sidecar, under the name its audit entries carry. */
  readonly onEgressLine: (server: string, line: string) => void;
}

export type ContainerRuntime =
  | {
      readonly available: true;
      readonly docker: Docker;
      /** Runs one registered container server (its networks, sidecar and container). */
      readonly launch: ContainerLauncher;
      /**
       * What the assistant's sandboxes (`sandbox/`) are made with: the same engine, process
       * limits, sidecar image and egress audit as contained servers, so they are contained alike.
       */
      readonly shared: SharedEngine;
      /** Write egress attempts still being folded (call before closing the audit log). */
      flushAudit(): void;
    }
  | { readonly available: false; readonly reason: string };

/**
 * Connect to the engine, start this gateway's reaper (which removes what it owns once it ends,
 * even by SIGKILL), sweep what dead gateways left behind, and run contained servers.
 * No engine: contained servers are unavailable (with the reason), remote servers still work.
 */
export async function createContainerRuntime(options: {
  home: string;
  session: string;
  log: (line: string) => void;
  audit: AuditSink;
  workspaceRoots: readonly WorkspaceRoot[];
  policy?: PolicyView;
  env?: NodeJS.ProcessEnv;
  /** Tests only: run between the steps of a server's start, to change the world at that moment. */
  testHooks?: StartHooks;
  /** `@secret:` env values → the stored values, at each start (absent: the home's credential store). */
  resolveSecrets?: (config: ContainerServerConfig) => Promise<ContainerServerConfig>;
  /** Told each container start and each egress decision (`mcp serve --metrics`). */
  observer?: RuntimeObserver;
  /**
   * The servers about to start: their images (as registered) are inspected beside the engine
   * probe, so that each one's first image check (image-check.ts) does not wait for one more round
   * trip after it.
   */
  starting?: readonly Pick<ContainerServerConfig, 'name' | 'image'>[];
  /** Told when the engine was asked to start a server's container, the last step that needs this process. */
  onStartSent?: (server: string) => void;
}): Promise<ContainerRuntime> {
  const credentials = new CredentialStore(options.home);
  const resolveSecrets =
    options.resolveSecrets ??
    ((config: ContainerServerConfig) => resolveSecretReferences(config, credentials));
  // The reaper (a process of its own, which must watch before any container exists) starts at
  // once, beside the engine probe, rather than after it: its start is the longest step before a
  // container can be created. Its outcome is reported only once the engine answered: without an
  // engine it fails too, and the engine's answer is the one that says what to do.
  const abandon = new AbortController();
  const reaper = startReaper({
    home: options.home,
    owner: currentOwner(options.session),
    env: options.env ?? process.env,
    signal: abandon.signal,
    onUnexpectedExit: (reason) =>
      options.log(
        `ringfence: the reaper of this gateway stopped (${redactedLine(reason)}); if the gateway is killed now, its containers stay until the next gateway starts. Its log: ${reaperLogPath(options.home)}`,
      ),
  }).then(
    (started) => {
      startupMark('runtime: reaper ready');
      return started;
    },
    (error: unknown) => error as Error,
  );
  // Every way out before the runtime is handed over: no container exists yet, so the reaper has
  // nothing to remove and is killed, whether it is still starting or already watching (an engine
  // that answers its ping but not the probe would otherwise leave it running beside the gateway).
  const giveUp = async () => {
    abandon.abort();
    const started = await reaper;
    if (!(started instanceof Error)) await started.stop();
  };
  let docker: Docker;
  let engine: EngineInfo;
  let processLimits: ContainerProcessLimits;
  let sweptAndSidecar: Promise<[SweepReport, string | undefined]> | undefined;
  let inspected: PrefetchedImages | undefined;
  try {
    const endpoint = resolveEngineEndpoint(options.env);
    docker = createDockerClient(endpoint);
    processLimits = containerProcessLimits(hostHardLimitsFor(endpoint));
    // Independent engine calls, all sent at once beside the probe (the reaper is starting
    // meanwhile): the sweep's lists, the sidecar lookup, and the inspection of the images about to
    // run. None creates anything; each is read only once the probe answered, and nothing is
    // created before the sweep is done and the reaper watches (below).
    const client = docker;
    sweptAndSidecar = Promise.all([
      sweepDeadGateways(client).catch((error: unknown) => ({
        containers: [] as string[],
        networks: [] as string[],
        images: [] as string[],
        errors: [(error as Error).message],
      })),
      findSidecarImage(client),
    ]);
    sweptAndSidecar.catch(() => {});
    inspected = prefetchImages(client, options.starting ?? []);
    engine = await probeEngine(docker, endpoint);
    startupMark('runtime: engine probed');
  } catch (error) {
    await giveUp();
    return { available: false, reason: (error as Error).message };
  }
  const [swept, sidecarImage] = await sweptAndSidecar.catch(async (error: unknown) => {
    await giveUp();
    throw error;
  });
  if (swept.containers.length + swept.networks.length + swept.images.length > 0) {
    options.log(
      swept.images.length === 0
        ? `ringfence: removed ${swept.containers.length} container(s) and ${swept.networks.length} network(s) left by gateways that no longer run.`
        : `ringfence: removed ${swept.containers.length} container(s), ${swept.networks.length} network(s) and ${swept.images.length} image(s) of sandboxes (checkpoints, forks) left by gateways that no longer run.`,
    );
  }
  startupMark('runtime: swept');
  for (const problem of swept.errors) options.log(`ringfence: sweeping leftovers: ${redactedLine(problem)}`);
  const observer = options.observer;
  const egress = new EgressAuditor(
    (input) => {
      options.audit
        .append(input)
        .catch((error: unknown) =>
          options.log(`ringfence: audit: ${redactedLine((error as Error).message)}`),
        );
    },
    undefined,
    observer ? (server, allowed) => observer.egress(server, allowed) : undefined,
  );
  const onEgressLine = (server: string, line: string) => egress.line(server, line);
  // No container before the reaper watches (or is known not to).
  const reaperFailure = await reaper;
  if (reaperFailure instanceof Error) {
    options.log(
      `ringfence: the reaper could not start (${redactedLine(reaperFailure.message)}); if this gateway is killed, its containers stay until the next gateway starts. Its log: ${reaperLogPath(options.home)}`,
    );
  }
  startupMark('runtime: ready');
  return {
    available: true,
    docker,
    flushAudit: () => egress.flush(),
    shared: { docker, session: options.session, engine, processLimits, sidecarImage, onEgressLine },
    launch: (config) => {
      const server = new DockerContainedServer(config, {
        docker,
        session: options.session,
        home: options.home,
        workspaceRoots: options.workspaceRoots,
        sidecarImage,
        engine,
        processLimits,
        onEgressLine,
        resolveSecrets,
        ...(inspected ? { prefetchedImage: inspected.take } : {}),
        ...(options.onStartSent ? { onStartSent: options.onStartSent } : {}),
        ...(options.policy ? { policy: options.policy } : {}),
        ...(options.testHooks ? { hooks: options.testHooks } : {}),
      });
      return observer ? observedStarts(config.name, server, observer) : server;
    },
  };
}

/** A contained server whose starts are told to the observer: each one that succeeded or failed. */
function observedStarts(name: string, server: ContainedServer, observer: RuntimeObserver): ContainedServer {
  return {
    start: () =>
      server.start().then(
        (stdio) => {
          observer.containerStarted(name);
          return stdio;
        },
        (error: unknown) => {
          observer.containerFailed(name);
          throw error;
        },
      ),
    onExit: (listener) => server.onExit(listener),
    stderr: () => server.stderr(),
    stop: () => server.stop(),
  };
}
