import { parseCidr } from '@ringfence/egress-proxy/contract';
import type Docker from 'dockerode';
import type { PolicyView } from '../ports/policy.js';
import { engineRefusal } from '../runtime/engine.js';
import { listContainers } from '../runtime/engine-races.js';
import { imageIdentity } from '../runtime/image-check.js';
import { currentOwner, isPersistent, LABEL, ownedBy } from '../runtime/labels.js';
import { resolveMounts, verifyMounts, type WorkspaceRoot } from '../runtime/mounts.js';
import { createServerNetworks } from '../runtime/networks.js';
import type { SharedEngine } from '../runtime/runtime.js';
import { type RunningSidecar, startSidecar } from '../runtime/sidecar.js';
import { removeManaged } from '../runtime/sweep.js';
import type { CreateRequest, RunRequest } from './args.js';
import { SandboxError } from './errors.js';
import { type HomeOwner, homeOwnerId, managedFilter, persistentLabels, usableBy } from './persistence.js';
import { recheck } from './recheck.js';
import { type RunOptions, type RunOutcome, runInSandbox } from './run.js';
import { egressRuleOf, sandboxContainerSpec, sandboxMark, unitConfig } from './spec.js';
import { OWN_SERVER } from './tools.js';

export interface SandboxSummary {
  readonly name: string;
  readonly image: string;
  readonly state: string;
  readonly network: 'none' | 'hosts' | 'any';
  readonly container: string;
  /** Outlives its gateway (`ringfence.persistent=1`). */
  readonly persistent: boolean;
  /** The session of the gateway that made it (another one's, for a persistent sandbox adopted). */
  readonly session: string;
}

export interface SandboxesOptions {
  /** The runtime's shared engine, or why there is none (no engine answers). */
  readonly engine: () => Promise<SharedEngine | { readonly unavailable: string }>;
  readonly home: string;
  readonly policy: PolicyView;
  /** The images sandboxes may be made from (`mcp serve --sandbox-image`), exactly as named. */
  readonly images: readonly string[];
  /** Where mounts may come from: the `--allow-mount` directories only (not the working directory). */
  readonly mountRoots: readonly WorkspaceRoot[];
  /** The most bytes checkpoints and snapshots may take together (`mcp serve --sandbox-save-cap`). */
  readonly saveCapBytes?: number;
  /** `mcp serve --sandbox-persistent`: the assistant may make sandboxes that outlive the gateway. */
  readonly persistent?: boolean;
  /**
   * Private address ranges named hosts may resolve into (`mcp serve --sandbox-allow-address`), as
   * a server's `--egress-allow-address`: the person's choice, within the policy, never the assistant's.
   */
  readonly allowAddresses?: readonly string[];
}

/** 10 GiB unless the person says otherwise. */
export const DEFAULT_SAVE_CAP_BYTES = 10 * 1024 ** 3;

/** What a sandbox's container says of itself, for listings (never used to decide anything). */
const NETWORK_LABEL = 'ringfence.sandbox_network';
export const IMAGE_LABEL = 'ringfence.sandbox_image';
/** The create request a sandbox was made with (JSON), so a fork is made with the same containment. */
export const REQUEST_LABEL = 'ringfence.sandbox_request';

/** A sandbox's container, found by label among this gateway's own. */
export interface LocatedSandbox {
  readonly engine: SharedEngine;
  readonly info: Docker.ContainerInfo;
  readonly container: Docker.Container;
}

/**
 * The assistant's sandboxes: made, listed, run in and deleted only among the containers labelled
 * `ringfence.sandbox` whose owner labels name this very gateway process. A container of anyone
 * else's (the person's own, another gateway's, one merely named alike) is never found, so never
 * touched. Each sandbox belongs to its gateway like a contained server's containers do: the
 * reaper removes it when the gateway ends, and the sweep when the gateway died.
 */
export class Sandboxes {
  private readonly sidecars = new Map<string, RunningSidecar>();
  /** Whether a tool asked for the engine: a gateway whose sandboxes were never used starts no runtime to close. */
  private used = false;
  /**
   * Names being created now: a second create of the same name is refused at once, so its failure
   * (a name taken in the engine) can never clean up the first one's objects, which carry the same labels.
   */
  private readonly creating = new Set<string>();
  /** Engine work begun and not awaited (a rewound sandbox's old container going): awaited before any removal. */
  private readonly settling = new Set<Promise<unknown>>();
  private homeOwner: Promise<HomeOwner> | undefined;

  constructor(private readonly options: SandboxesOptions) {
    for (const range of options.allowAddresses ?? []) {
      try {
        parseCidr(range);
      } catch (error) {
        throw new SandboxError(
          'SANDBOX_ARGUMENTS',
          `--sandbox-allow-address "${range}" is refused: ${(error as Error).message}. Give an address range as ADDRESS/PREFIX (10.20.0.0/16, fd00::/8).`,
          { cause: error },
        );
      }
    }
  }

  get allowAddresses(): readonly string[] {
    return this.options.allowAddresses ?? [];
  }

  get images(): readonly string[] {
    return this.options.images;
  }

  get mountRoots(): readonly WorkspaceRoot[] {
    return this.options.mountRoots;
  }

  get homeDir(): string {
    return this.options.home;
  }

  get saveCapBytes(): number {
    return this.options.saveCapBytes ?? DEFAULT_SAVE_CAP_BYTES;
  }

  /** Work a tool began and did not wait for: its failure is left to the removal that follows. */
  settleLater(work: Promise<unknown>): void {
    const settled = work.catch(() => {}).finally(() => this.settling.delete(settled));
    this.settling.add(settled);
  }

  private async settled(): Promise<void> {
    await Promise.all([...this.settling]);
  }

  get policy(): PolicyView {
    return this.options.policy;
  }

  get persistentAllowed(): boolean {
    return this.options.persistent === true;
  }

  /**
   * This home as the owner of persistent sandboxes. Read only where persistent sandboxes are
   * allowed: a gateway without `--sandbox-persistent` neither makes nor adopts any.
   */
  private async home(engine: SharedEngine): Promise<HomeOwner | undefined> {
    if (!this.persistentAllowed) return undefined;
    this.homeOwner ??= homeOwnerId(this.options.home).then((id) => ({
      id,
      host: currentOwner(engine.session).host,
    }));
    return this.homeOwner;
  }

  async engine(): Promise<SharedEngine> {
    this.used = true;
    const engine = await this.options.engine();
    if ('unavailable' in engine)
      throw new SandboxError(
        'SANDBOX_ENGINE',
        `no container engine answers (${engine.unavailable}); sandboxes need one. Run \`ringfence doctor\` for the fix.`,
      );
    return engine;
  }

  /**
   * This gateway's containers of one sandbox (or of all), by label, owner checked: made by this
   * process, or persistent and of this home (persistence.ts).
   */
  private async containers(engine: SharedEngine, name?: string): Promise<Docker.ContainerInfo[]> {
    const owner = currentOwner(engine.session);
    const home = await this.home(engine);
    // No `ringfence.managed=1` pre-filter: a persistent sandbox is `ringfence.managed=persistent`.
    const found = await listContainers(engine.docker, {
      all: true,
      filters: {
        label: [`${LABEL.role}=sandbox`, name === undefined ? LABEL.sandbox : `${LABEL.sandbox}=${name}`],
      },
    });
    // Under its own name only (ringfence-sandbox-SESSION-NAME; an adopted persistent one has
    // another session's): a sandbox's old container being removed after a rewind is not it.
    return found.filter((c) => {
      const sandbox = c.Labels?.[LABEL.sandbox];
      const named = c.Names?.[0] ?? '';
      return (
        usableBy(c.Labels, owner, home) &&
        sandbox !== undefined &&
        named.startsWith('/ringfence-sandbox-') &&
        named.endsWith(`-${sandbox}`)
      );
    });
  }

  /**
   * One sandbox this gateway may use, or a refusal that says how to find one. A persistent one an
   * earlier gateway made is used only if this gateway would make it as it is now (recheck.ts):
   * adopting it never gives more network, mounts or images than a sandbox_create here would.
   * Its removal (`remove`) needs no such check.
   */
  async find(
    engine: SharedEngine,
    name: string,
    purpose: 'use' | 'remove' = 'use',
  ): Promise<Docker.ContainerInfo> {
    const [found] = await this.containers(engine, name);
    if (!found)
      throw new SandboxError(
        'SANDBOX_UNKNOWN',
        `there is no sandbox "${name}" in this session. See the sandboxes with sandbox_list, or make one with sandbox_create.`,
      );
    if (purpose === 'use' && !ownedBy(found.Labels, currentOwner(engine.session)))
      await this.recheck(engine, found.Id);
    return found;
  }

  /** Refused unless this gateway would make the sandbox as it is now (before it starts again, or is adopted). */
  async recheck(engine: SharedEngine, id: string): Promise<void> {
    await recheck(this, engine, await engine.docker.getContainer(id).inspect());
  }

  /** A sandbox of this gateway by name (refused as unknown when it is not one). */
  async located(name: string): Promise<LocatedSandbox> {
    const engine = await this.engine();
    const info = await this.find(engine, name);
    return { engine, info, container: engine.docker.getContainer(info.Id) };
  }

  /** The engine ids of the sandboxes this gateway may use now. */
  async containerIds(engine: SharedEngine): Promise<string[]> {
    return (await this.containers(engine)).map((c) => c.Id);
  }

  async list(): Promise<SandboxSummary[]> {
    const engine = await this.engine();
    return (await this.containers(engine)).map(summaryOf);
  }

  /** The image by its exact name, here on this host, and admitted by the policy. */
  async checkedImage(engine: SharedEngine, image: string): Promise<Docker.ImageInspectInfo> {
    if (!this.options.images.includes(image))
      throw new SandboxError(
        'SANDBOX_IMAGE',
        this.options.images.length === 0
          ? 'no image is allowed for sandboxes: the person starts `ringfence mcp serve --sandbox-tools --sandbox-image IMAGE` to allow one.'
          : `the image ${image} is not one the person allowed for sandboxes; use one of: ${this.options.images.join(', ')}.`,
      );
    let info: Docker.ImageInspectInfo;
    try {
      info = await engine.docker.getImage(image).inspect();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
      throw new SandboxError(
        'SANDBOX_IMAGE',
        `the image ${image} is not on this host, and ringfence never pulls implicitly. The person can fetch it with: docker pull ${image}`,
      );
    }
    const refusal = this.options.policy.imageRefusal(imageIdentity(image, info));
    if (refusal) throw new SandboxError('SANDBOX_IMAGE', refusal);
    return info;
  }

  /**
   * `from`: an image ringfence committed from another sandbox (a fork's), used in place of
   * `request.image`, which is still checked (allowed, here, admitted by the policy) as the image
   * the sandbox's files began from.
   */
  async create(request: CreateRequest, from?: { readonly imageId: string }): Promise<SandboxSummary> {
    if (this.creating.has(request.name))
      throw new SandboxError(
        'SANDBOX_EXISTS',
        `a sandbox "${request.name}" is being created by another call; wait for it, or choose another name.`,
      );
    this.creating.add(request.name);
    try {
      return await this.createOnce(request, from);
    } finally {
      this.creating.delete(request.name);
    }
  }

  private async createOnce(
    request: CreateRequest,
    from?: { readonly imageId: string },
  ): Promise<SandboxSummary> {
    const engine = await this.engine();
    const rule = egressRuleOf(request, this.allowAddresses);
    if (request.persistent && !this.persistentAllowed)
      throw new SandboxError(
        'SANDBOX_PERSISTENT',
        'persistent sandboxes are not allowed here: the person starts `ringfence mcp serve --sandbox-persistent` to allow them. Leave persistent out for a sandbox that goes with this gateway.',
      );
    if (request.persistent && rule.mode === 'allow')
      throw new SandboxError(
        'SANDBOX_PERSISTENT',
        'a persistent sandbox cannot have hosts: its egress proxy reports each connection to the gateway that made it, and once that gateway ends no one would record them. Use no network, or ask for a sandbox that is not persistent.',
      );
    const home = request.persistent ? await this.home(engine) : undefined;
    const lasting = home ? persistentLabels(home) : {};
    const cannot = engineRefusal(engine.engine, rule.mode);
    // The engine's words are written for servers; say what the assistant can do instead.
    if (cannot)
      throw new SandboxError(
        'SANDBOX_EGRESS',
        rule.mode === 'deny'
          ? cannot
          : `${cannot} For a sandbox: make it without hosts or egress (no network), or the person serves sandboxes on an engine that can contain its network.`,
      );
    const info = await this.checkedImage(engine, request.image);
    const refusal = this.options.policy.egressRefusal(OWN_SERVER, egressRuleOf(request));
    if (refusal) throw new SandboxError('SANDBOX_EGRESS', refusal);
    // The person's address ranges are checked apart, so the refusal says whose choice is too wide.
    if (rule.addresses && this.options.policy.egressRefusal(OWN_SERVER, rule))
      throw new SandboxError(
        'SANDBOX_EGRESS',
        `the organisation policy lets server ringfence reach no private addresses, and this gateway was started with --sandbox-allow-address ${rule.addresses.join(', ')}. The person can start \`ringfence mcp serve\` without it, or ask the policy admin for default_egress "any".`,
      );
    if (rule.mode === 'allow' && !engine.sidecarImage)
      throw new SandboxError(
        'SANDBOX_EGRESS',
        'named hosts need the egress sidecar image, which is not built. The person can build it with: ringfence images build',
      );
    if (request.mounts.length > 0 && this.options.mountRoots.length === 0)
      throw new SandboxError(
        'SANDBOX_MOUNT',
        'nothing may be mounted into sandboxes: the person names what may with `ringfence mcp serve --allow-mount DIR[:rw]`.',
      );
    let mounts: ReturnType<typeof resolveMounts>;
    try {
      mounts = resolveMounts(request.mounts, this.options.mountRoots, this.options.home);
    } catch (error) {
      throw new SandboxError('SANDBOX_MOUNT', (error as Error).message, { cause: error });
    }
    if ((await this.containers(engine, request.name)).length > 0)
      throw new SandboxError(
        'SANDBOX_EXISTS',
        `a sandbox "${request.name}" already exists in this session; choose another name or delete it with sandbox_delete.`,
      );
    const imageId = from?.imageId ?? info.Id;
    const config = unitConfig(request, imageId, this.allowAddresses);
    const mark = { ...sandboxMark(request.name), [NETWORK_LABEL]: networkKind(rule.mode), ...lasting };
    try {
      const networks = await createServerNetworks(
        engine.docker,
        config,
        engine.session,
        engine.engine.kind,
        mark,
      );
      let proxyAddress: string | undefined;
      if (rule.mode === 'allow' && networks.outer) {
        const sidecar = await startSidecar(engine.docker, {
          config,
          session: engine.session,
          image: engine.sidecarImage!,
          inner: networks.serverNetwork,
          outer: networks.outer,
          processLimits: engine.processLimits,
          onLine: (line) => engine.onEgressLine(OWN_SERVER, line),
          extraLabels: mark,
        });
        this.sidecars.set(request.name, sidecar);
        proxyAddress = sidecar.address;
      }
      const spec = sandboxContainerSpec(request, imageId, {
        session: engine.session,
        network: networks.serverNetwork,
        processLimits: engine.processLimits,
        mounts,
        ...(proxyAddress ? { proxyAddress } : {}),
        rootlessPodman: engine.engine.kind === 'podman' && engine.engine.mode === 'rootless',
      });
      const container = await engine.docker.createContainer({
        ...spec,
        Labels: {
          ...spec.Labels,
          [NETWORK_LABEL]: networkKind(rule.mode),
          [IMAGE_LABEL]: request.image,
          [REQUEST_LABEL]: storedRequest(request),
          ...lasting,
        },
      });
      verifyMounts(mounts);
      await container.start();
    } catch (error) {
      await this.remove(engine, request.name).catch(() => {});
      if (error instanceof SandboxError) throw error;
      throw new SandboxError('SANDBOX_RUN', `the sandbox could not be made: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const made = await this.find(engine, request.name);
    return summaryOf(made);
  }

  async run(request: RunRequest, options: RunOptions = {}): Promise<RunOutcome> {
    const engine = await this.engine();
    const found = await this.find(engine, request.name);
    if (found.State !== 'running')
      throw new SandboxError(
        'SANDBOX_RUN',
        `the sandbox "${request.name}" is ${found.State}, not running; start it with sandbox_start.`,
      );
    return runInSandbox(engine.docker.getContainer(found.Id), request, options);
  }

  async delete(name: string): Promise<{ containers: string[]; networks: string[]; images: string[] }> {
    const engine = await this.engine();
    await this.find(engine, name, 'remove');
    return this.remove(engine, name);
  }

  /**
   * Every sandbox of this gateway (at its close), except the persistent ones: they outlive it by
   * design, and those an earlier gateway made are not this one's to end.
   */
  async removeAll(): Promise<void> {
    if (!this.used) return;
    await this.settled();
    const engine = await this.options.engine();
    if ('unavailable' in engine) return;
    for (const sidecar of this.sidecars.values()) await sidecar.stop().catch(() => {});
    this.sidecars.clear();
    const owner = currentOwner(engine.session);
    await removeManaged(
      engine.docker,
      (labels) => ownedBy(labels, owner) && labels?.[LABEL.sandbox] !== undefined && !isPersistent(labels),
      [LABEL.sandbox, `${LABEL.session}=${engine.session}`],
    );
  }

  /** Its container, sidecar, networks and checkpoints: exactly those labelled with its name and owned by us. */
  private async remove(
    engine: SharedEngine,
    name: string,
  ): Promise<{ containers: string[]; networks: string[]; images: string[] }> {
    await this.settled();
    const sidecar = this.sidecars.get(name);
    this.sidecars.delete(name);
    await sidecar?.stop().catch(() => {});
    const owner = currentOwner(engine.session);
    const home = await this.home(engine);
    // No session pre-filter: a persistent sandbox adopted from an earlier gateway has its session.
    const select = (labels: Record<string, string> | undefined) =>
      usableBy(labels, owner, home) && labels?.[LABEL.sandbox] === name;
    const report = await removeManaged(engine.docker, select, [
      managedFilter(false),
      `${LABEL.sandbox}=${name}`,
    ]);
    if (home) {
      const lasting = await removeManaged(engine.docker, select, [
        managedFilter(true),
        `${LABEL.sandbox}=${name}`,
      ]);
      report.containers.push(...lasting.containers);
      report.networks.push(...lasting.networks);
      report.images.push(...lasting.images);
      report.errors.push(...lasting.errors);
    }
    if (report.errors.length > 0)
      throw new SandboxError(
        'SANDBOX_RUN',
        `removing the sandbox "${name}" failed: ${report.errors.join('; ')}`,
      );
    return { containers: report.containers, networks: report.networks, images: report.images };
  }
}

/** What a fork needs to be made as its source was: the request, less its name and image. */
function storedRequest(request: CreateRequest): string {
  return JSON.stringify({
    ...(request.hosts.length > 0 ? { hosts: request.hosts } : {}),
    ...(request.egressAny ? { egress: 'any' } : {}),
    mounts: request.mounts,
    command: request.command,
  });
}

const networkKind = (mode: 'deny' | 'allow' | 'any'): SandboxSummary['network'] =>
  mode === 'deny' ? 'none' : mode === 'allow' ? 'hosts' : 'any';

function summaryOf(c: Docker.ContainerInfo): SandboxSummary {
  return {
    name: c.Labels[LABEL.sandbox]!,
    image: c.Labels[IMAGE_LABEL] ?? c.Image,
    state: c.State,
    network: (c.Labels[NETWORK_LABEL] ?? 'none') as SandboxSummary['network'],
    container: c.Names?.[0]?.replace(/^\//, '') ?? c.Id,
    persistent: isPersistent(c.Labels),
    session: c.Labels[LABEL.session] ?? '',
  };
}
