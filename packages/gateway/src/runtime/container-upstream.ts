import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@ringfence/policy';
import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';
import type { PolicyView } from '../serve/policy-view.js';
import { UpstreamClient } from '../upstream/mcp-client.js';
import {
  DEFAULT_TIMEOUTS,
  type ToolListing,
  type Upstream,
  type UpstreamTimeouts,
} from '../upstream/types.js';
import { attachStdio, removeContainer } from './attach.js';
import { serverContainerSpec } from './container-spec.js';
import { checkImage } from './image-check.js';
import { resolveMounts, type WorkspaceRoot } from './mounts.js';
import { createServerNetworks, removeNetworks } from './networks.js';
import { type RunningSidecar, startSidecar } from './sidecar.js';
import { StderrTail } from './stderr-tail.js';
import { StreamTransport } from './stdio-transport.js';

export interface ContainerDeps {
  readonly docker: Docker;
  readonly session: string;
  readonly home: string;
  readonly workspaceRoots: readonly WorkspaceRoot[];
  /** The egress sidecar image; undefined when none is built (then `allow` servers cannot start). */
  readonly sidecarImage: string | undefined;
  /** One proxy stdout line of this server's sidecar (turned into an `mcp.egress` audit entry). */
  readonly onEgressLine: (server: string, line: string) => void;
  /** Checked again at every start: allowed images and the egress ceiling. */
  readonly policy?: PolicyView;
  readonly timeouts?: UpstreamTimeouts;
}

/** Where a server's last stderr (8 KiB, env values redacted) is kept for `ringfence mcp ls`. */
export function stderrLogPath(home: string, server: string): string {
  return join(home, 'logs', `${server}.stderr`);
}

/** A third-party MCP server in its own hardened container, spoken to over its attached stdio. */
export class ContainerUpstream implements Upstream {
  readonly name: string;
  readonly destination: string;
  private client: UpstreamClient | undefined;
  private container: Docker.Container | undefined;
  private sidecar: RunningSidecar | undefined;
  private networks: readonly string[] = [];
  private readonly tail: StderrTail;
  private closing = false;
  private changeListener: (() => void) | undefined;
  private closedListener: ((reason: string) => void) | undefined;

  constructor(
    private readonly config: ContainerServerConfig,
    private readonly deps: ContainerDeps,
  ) {
    this.name = config.name;
    this.destination = `sandbox mcp-${config.name}`;
    this.tail = new StderrTail(Object.values(config.env ?? {}));
  }

  async start(): Promise<void> {
    const { docker, session } = this.deps;
    const image = await checkImage(docker, this.config, this.deps.policy);
    const mounts = resolveMounts(this.config.mounts ?? [], this.deps.workspaceRoots, this.deps.home);
    if (this.config.egress.mode === 'allow' && !this.deps.sidecarImage) {
      throw new Error(
        'its egress rule needs the egress sidecar image, which is not built. Run: ringfence images build',
      );
    }
    const networks = await createServerNetworks(docker, this.config, session);
    this.networks = networks.created;
    await this.stopIfClosing();
    if (this.config.egress.mode === 'allow' && networks.outer) {
      this.sidecar = await startSidecar(docker, {
        config: this.config,
        session,
        image: this.deps.sidecarImage!,
        inner: networks.serverNetwork,
        outer: networks.outer,
        onLine: (line) => this.deps.onEgressLine(this.name, line),
      });
      await this.stopIfClosing();
    }
    this.container = await docker.createContainer(
      serverContainerSpec(
        this.config,
        session,
        networks.serverNetwork,
        mounts,
        undefined,
        Object.keys(image.Config?.Volumes ?? {}),
      ),
    );
    await this.stopIfClosing();
    const streams = await attachStdio(docker, this.container);
    streams.stderr.on('data', (chunk: Buffer) => this.tail.push(chunk));
    const transport = new StreamTransport(streams.stdout, streams.stdin, () => {
      streams.stdin.end();
    });
    await this.container.start();
    this.watchExit(this.container);
    this.client = new UpstreamClient(this.deps.timeouts ?? DEFAULT_TIMEOUTS);
    this.client.onToolsChanged(() => this.changeListener?.());
    try {
      await this.client.connect(transport);
    } catch (error) {
      throw new Error(
        `${(error as Error).message}${this.tail.text() ? `; its stderr ends: ${this.tail.text().slice(-400)}` : ''}`,
      );
    }
  }

  private watchExit(container: Docker.Container): void {
    container
      .wait()
      .then((result: { StatusCode?: number }) => {
        if (!this.closing)
          this.closedListener?.(`its container exited with code ${result.StatusCode ?? 'unknown'}`);
      })
      .catch(() => {
        if (!this.closing) this.closedListener?.('its container disappeared');
      });
  }

  private get live(): UpstreamClient {
    if (!this.client) throw new Error(`${this.name} is not started`);
    return this.client;
  }

  listTools(): Promise<ToolListing> {
    return this.live.listTools();
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown> {
    return this.live.callTool(name, args, options.signal);
  }

  onToolsChanged(listener: () => void): void {
    this.changeListener = listener;
  }

  onClosed(listener: (reason: string) => void): void {
    this.closedListener = listener;
  }

  /** The last 8 KiB of the server's stderr, env values redacted. Never sent to the model. */
  stderr(): string {
    return this.tail.text();
  }

  /**
   * close() may run while start() is still creating things (the start-up timeout): whatever start
   * creates after that is removed here instead of being left for the next sweep.
   */
  private async stopIfClosing(): Promise<void> {
    if (!this.closing) return;
    await this.close();
    throw new Error('it was stopped while starting');
  }

  async close(): Promise<void> {
    this.closing = true;
    // Fast enough for clients that SIGTERM two seconds after closing stdin: everything in parallel,
    // networks last (they cannot go while a container is attached).
    await Promise.all([
      this.client?.close().catch(() => {}),
      this.container ? removeContainer(this.container).catch(() => {}) : undefined,
      this.sidecar?.stop().catch(() => {}),
    ]);
    await removeNetworks(this.deps.docker, this.networks).catch(() => {});
    await this.saveStderr().catch(() => {});
  }

  private async saveStderr(): Promise<void> {
    const text = this.tail.text();
    const path = stderrLogPath(this.deps.home, this.name);
    await mkdir(join(this.deps.home, 'logs'), { recursive: true, mode: 0o700 });
    await writeFileAtomic(path, text, { mode: 0o600 });
  }
}
