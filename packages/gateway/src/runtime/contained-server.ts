import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@ringfence/policy';
import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import type { PolicyView } from '../ports/policy.js';
import type { ContainedServer, ContainedStdio } from '../ports/upstream.js';
import { startupMark } from '../util/startup.js';
import { attachStdio } from './attach.js';
import { serverContainerSpec } from './container-spec.js';
import { type EngineInfo, engineRefusal } from './engine.js';
import { removeContainer } from './engine-races.js';
import { checkImage } from './image-check.js';
import { resolveMounts, verifyMounts, type WorkspaceRoot } from './mounts.js';
import { createServerNetworks, removeNetworks } from './networks.js';
import { type ContainerProcessLimits, limitsRefusal } from './process-limits.js';
import { type RunningSidecar, startSidecar } from './sidecar.js';
import { StderrTail } from './stderr-tail.js';

export interface ContainerDeps {
  readonly docker: Docker;
  readonly session: string;
  readonly home: string;
  readonly workspaceRoots: readonly WorkspaceRoot[];
  /** The egress sidecar image; undefined when none is built (then `allow` servers cannot start). */
  readonly sidecarImage: string | undefined;
  /** The engine as probed: what it cannot contain is refused before anything is created. */
  readonly engine?: EngineInfo;
  /** nofile and nproc of the server and its sidecar, within what the host grants. */
  readonly processLimits: ContainerProcessLimits;
  /** One proxy stdout line of this server's sidecar (turned into an `mcp.egress` audit entry). */
  readonly onEgressLine: (server: string, line: string) => void;
  /** Checked again at every start: allowed images and the egress ceiling. */
  readonly policy?: PolicyView;
  readonly hooks?: StartHooks;
  /**
   * The config with each `@secret:` env value replaced by the stored credential's value (read at
   * every start, in memory only: it goes into the container's Env and nowhere else).
   */
  readonly resolveSecrets?: (config: ContainerServerConfig) => Promise<ContainerServerConfig>;
  /**
   * The engine's inspection of this server's image, asked when the runtime started (runtime.ts),
   * handed out once; undefined: the check asks the engine itself.
   */
  /** Told once the engine was asked to start this server's container (after every check). */
  readonly onStartSent?: (server: string) => void;
  readonly prefetchedImage?: (config: ContainerServerConfig) => Promise<Docker.ImageInspectInfo> | undefined;
}

/**
 * Tests only (never set by the CLI): run at a given moment of a start, so a test can change the
 * world exactly there (swap a mounted folder for a link) instead of racing for it.
 */
export interface StartHooks {
  /** After the mounts were resolved, before anything is created. */
  readonly afterMountsResolved?: () => Promise<void>;
  /** After the server container was created and attached, before the mounts are checked again. */
  readonly afterCreate?: () => Promise<void>;
}

/** Where a server's last stderr (8 KiB, env values redacted) is kept for `ringfence mcp ls`. */
export function stderrLogPath(home: string, server: string): string {
  return join(home, 'logs', `${server}.stderr`);
}

/** A contained server's lifecycle: hardened container, its networks and egress sidecar. */
export class DockerContainedServer implements ContainedServer {
  private container: Docker.Container | undefined;
  private sidecar: RunningSidecar | undefined;
  private networks: readonly string[] = [];
  private tail: StderrTail;
  private stopping = false;
  private exitListener: ((reason: string) => void) | undefined;

  constructor(
    private readonly config: ContainerServerConfig,
    private readonly deps: ContainerDeps,
  ) {
    this.tail = new StderrTail(Object.values(config.env ?? {}));
  }

  async start(): Promise<ContainedStdio> {
    try {
      return await this.startContainers();
    } catch (error) {
      // The engine's raw OCI error is the cause; say what it means and what to do.
      const refusal = limitsRefusal(error, this.deps.processLimits);
      throw refusal ? new UpstreamError('ENGINE_LIMITS', refusal, { cause: error }) : error;
    }
  }

  private async startContainers(): Promise<ContainedStdio> {
    const { docker, session } = this.deps;
    const refusal = this.deps.engine && engineRefusal(this.deps.engine, this.config.egress.mode);
    if (refusal) throw new UpstreamError('ENGINE_CANNOT_CONTAIN', refusal);
    const image = await checkImage(
      docker,
      this.config,
      this.deps.policy,
      this.deps.prefetchedImage?.(this.config),
    );
    startupMark(`${this.config.name}: image checked`);
    const mounts = resolveMounts(this.config.mounts ?? [], this.deps.workspaceRoots, this.deps.home);
    await this.deps.hooks?.afterMountsResolved?.();
    if (this.config.egress.mode === 'allow' && !this.deps.sidecarImage) {
      throw new UpstreamError(
        'SIDECAR_IMAGE_MISSING',
        'its egress rule needs the egress sidecar image, which is not built. Run: ringfence images build',
      );
    }
    const networks = await createServerNetworks(docker, this.config, session, this.deps.engine?.kind);
    this.networks = networks.created;
    startupMark(`${this.config.name}: networks created`);
    await this.stopIfStopping();
    if (this.config.egress.mode === 'allow' && networks.outer) {
      this.sidecar = await startSidecar(docker, {
        config: this.config,
        session,
        image: this.deps.sidecarImage!,
        inner: networks.serverNetwork,
        outer: networks.outer,
        processLimits: this.deps.processLimits,
        onLine: (line) => this.deps.onEgressLine(this.config.name, line),
      });
      await this.stopIfStopping();
    }
    // Read last, just before the container is made: a value is held no longer than needed.
    const config = this.deps.resolveSecrets ? await this.deps.resolveSecrets(this.config) : this.config;
    this.tail = new StderrTail(Object.values(config.env ?? {}));
    this.container = await docker.createContainer(
      serverContainerSpec(config, {
        session,
        network: networks.serverNetwork,
        processLimits: this.deps.processLimits,
        mounts,
        imageVolumes: Object.keys(image.Config?.Volumes ?? {}),
        ...(this.sidecar ? { proxyAddress: this.sidecar.address } : {}),
        rootlessPodman: this.deps.engine?.kind === 'podman' && this.deps.engine.mode === 'rootless',
      }),
    );
    startupMark(`${this.config.name}: container created`);
    await this.stopIfStopping();
    const streams = await attachStdio(docker, this.container);
    startupMark(`${this.config.name}: attached`);
    streams.stderr.on('data', (chunk: Buffer) => this.tail.push(chunk));
    await this.deps.hooks?.afterCreate?.();
    // Last thing before start, to leave the least time for a swap (docs/containers.md, "Mounts").
    try {
      verifyMounts(mounts);
    } catch (error) {
      await this.stop();
      throw error;
    }
    const started = this.container.start();
    // Sent: what is left of this start is the engine's and the server's own, and needs nothing
    // more of this thread (mcp serve loads the rest of its code meanwhile).
    this.deps.onStartSent?.(this.config.name);
    await started;
    startupMark(`${this.config.name}: container started`);
    this.watchExit(this.container);
    return {
      stdout: streams.stdout,
      stdin: streams.stdin,
      mounts: mounts.map((mount) => ({ target: mount.target, readOnly: mount.readOnly })),
    };
  }

  private watchExit(container: Docker.Container): void {
    container
      .wait()
      .then((result: { StatusCode?: number }) => {
        if (!this.stopping)
          this.exitListener?.(`its container exited with code ${result.StatusCode ?? 'unknown'}`);
      })
      .catch(() => {
        if (!this.stopping) this.exitListener?.('its container disappeared');
      });
  }

  onExit(listener: (reason: string) => void): void {
    this.exitListener = listener;
  }

  stderr(): string {
    return this.tail.text();
  }

  /**
   * stop() may run while start() is still creating things (the start-up timeout): whatever start
   * creates after that is removed here instead of being left for the next sweep.
   */
  private async stopIfStopping(): Promise<void> {
    if (!this.stopping) return;
    await this.stop();
    throw new UpstreamError('SERVER_STOPPED_WHILE_STARTING', 'it was stopped while starting');
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // Fast enough for clients that SIGTERM two seconds after closing stdin: container and sidecar
    // in parallel, networks last (they cannot go while a container is attached).
    await Promise.all([
      this.container ? removeContainer(this.container).catch(() => {}) : undefined,
      this.sidecar?.stop().catch(() => {}),
    ]);
    await removeNetworks(this.deps.docker, this.networks).catch(() => {});
    await this.saveStderr().catch(() => {});
  }

  private async saveStderr(): Promise<void> {
    const path = stderrLogPath(this.deps.home, this.config.name);
    await mkdir(join(this.deps.home, 'logs'), { recursive: true, mode: 0o700 });
    await writeFileAtomic(path, this.tail.text(), { mode: 0o600 });
  }
}
