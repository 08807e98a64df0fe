import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AuditLog, defaultAuditPath } from '@ringfence/gateway/audit';
import {
  answerCapBytes,
  type ContainerServerConfig,
  EraStore,
  MAX_RESULT_MB,
  type ServerConfig,
  ServerStore,
  selectServers,
} from '@ringfence/gateway/config';
import type { KnownCredentials } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import type { GatewayMetrics } from '@ringfence/gateway/metrics';
import { policyView } from '@ringfence/gateway/policy-view';
import {
  type ContainedServer,
  type ContainedStdio,
  LOCAL_ONLY,
  type PolicyView,
  type Upstream,
  UpstreamError,
} from '@ringfence/gateway/ports';
import type { ContainerRuntime, WorkspaceRoot } from '@ringfence/gateway/runtime';
import { SchemaGuard } from '@ringfence/gateway/schema';
import { startupMark } from '@ringfence/gateway/startup';
import { guardedLine } from '@ringfence/gateway/text';
import type { upstreamFactory } from '@ringfence/gateway/upstream';
import { loadInstalledPolicy, type Policy } from '@ringfence/policy';
import { CliError } from './errors.js';

/**
 * stderr only: stdout of `mcp serve` belongs to the protocol. Each report line's server words
 * (tool names, reasons, error text, stderr tails) were rendered once where the line was built;
 * here the whole line passes the last guard, which changes nothing rendered and escapes any
 * control or newline left, so it stays exactly one line and no server text is rendered twice.
 */
export const reportLine = (line: string): void => {
  process.stderr.write(`${guardedLine(line)}\n`);
};

/**
 * Load the installed organisation policy. Absent → local rules only. Present but failing any
 * check → throw with the reason and the fix: the gateway must not start (fail closed).
 */
export async function loadPolicyView(home: string): Promise<PolicyView> {
  return (await loadPolicy(home)).view;
}

/** {@link loadPolicyView}, with the verified policy itself (absent: none installed). */
export async function loadPolicy(home: string): Promise<{ view: PolicyView; policy?: Policy }> {
  const installed = await loadInstalledPolicy({ home });
  if (!installed.ok) {
    throw new CliError(
      'POLICY_REFUSED',
      `The installed organisation policy is refused (${installed.code}): ${installed.message} The gateway does not start without a valid policy once one is installed. Check it with: ringfence doctor`,
    );
  }
  return installed.present ? { view: policyView(installed), policy: installed.policy } : { view: LOCAL_ONLY };
}

export interface ServingDeps {
  /** The options of runGateway that come from these dependencies. */
  readonly gatewayOptions: {
    home: string;
    guard: SchemaGuard;
    audit: AuditLog;
    createUpstream: ReturnType<typeof upstreamFactory>;
    policy: PolicyView;
    log: (line: string) => void;
    session: string;
    /**
     * The registrations to serve, read and selected once here: the containers begun early are
     * these very registrations, so what is started and what is served cannot differ.
     */
    servers: readonly ServerConfig[];
    credentials: KnownCredentials;
    /** ringfence's own server, with `--sandbox-tools` only. */
    ownServer?: Upstream;
  };
  /**
   * Settles once every container server begun early has had its container's start sent to the
   * engine, or failed: what is left of their start (the engine's, the servers' own boot) needs
   * nothing of this thread, which can then load the served endpoint's code meanwhile.
   */
  containersUnderWay(): Promise<void>;
  close(): Promise<void>;
}

/** `--allow-mount DIR[:rw]` → a workspace root; the current directory is always one (writable). */
export function workspaceRoots(allowMounts: readonly string[] = []): WorkspaceRoot[] {
  return [
    { path: process.cwd(), writable: true },
    ...allowMounts.map((spec) =>
      spec.endsWith(':rw')
        ? { path: spec.slice(0, -3), writable: true }
        : { path: spec.replace(/:ro$/, ''), writable: false },
    ),
  ];
}

/** Everything `mcp serve` and `mcp tools` need, built once. */
export async function servingDeps(
  session: string,
  options: {
    allowMounts?: readonly string[];
    only?: string;
    /**
     * `--sandbox-tools`: serve ringfence's own tools, sandboxes made from these images
     * (`--sandbox-image`); absent: they are not served.
     */
    sandboxImages?: readonly string[];
    /** `--sandbox-save-cap` in bytes: what checkpoints and snapshots may take together. */
    sandboxSaveCap?: number;
    /** `--sandbox-persistent`: sandboxes may be made to outlive this gateway. */
    sandboxPersistent?: boolean;
    /** `--sandbox NAME`: the sandbox the assistant works in, written in every audit entry. */
    sandbox?: string;
    /** `--sandbox-allow-address`: private ranges sandboxes' named hosts may resolve into. */
    sandboxAddresses?: readonly string[];
    /** Run after the policy check and before any server starts: what it refuses starts nothing. */
    admit?: (home: string) => Promise<void>;
    /** `mcp serve --metrics`: what the audit log and the container runtime report to. */
    metrics?: GatewayMetrics;
    /** `mcp serve`: stream the audit log to the sinks of `audit-export.json` while serving. */
    auditExport?: boolean;
  } = {},
): Promise<ServingDeps> {
  const home = resolveHome();
  startupMark('serving: modules loaded');
  const { view: policy, policy: verifiedPolicy } = await loadPolicy(home);
  startupMark('serving: policy checked');
  // A wrong audit-export.json is refused before anything starts: a team that configured an
  // export must not get a gateway that silently exports nothing.
  const exportSinks = options.auditExport ? await loadAuditExportSettings(home) : [];
  await options.admit?.(home);
  // Read and selected once, before anything is opened: an unreadable file or an --only that names
  // no server is refused here with nothing to close.
  const servers = selectServers(await new ServerStore(home).list(), options.only);
  // The result cap that binds is each server's (the pipeline's, base64 counted decoded); the
  // guard's own size check of a whole result is set to the largest answer any server may send.
  const guard = new SchemaGuard({ limits: { maxResultBytes: answerCapBytes(MAX_RESULT_MB * 1024 * 1024) } });
  // Each listed tool's schema is compiled in a worker before anything is listed: started now, the
  // workers load on the other core while this thread loads the rest, instead of after it.
  void guard.warmUp(1);
  const audit = await AuditLog.open({
    session,
    path: defaultAuditPath(),
    onNotice: reportLine,
    ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
    ...(options.metrics ? { timings: options.metrics.audit } : {}),
  });
  startupMark('serving: audit log open');
  // audit-export.json in the home: the collectors this gateway streams its log to as it writes.
  const streaming = await auditStreaming(home, exportSinks);
  // The container runtime (engine probe, reaper process, sweep of dead gateways' leftovers,
  // sidecar image lookup, and dockerode with its dependencies) is built on first need only: a
  // gateway of remote servers never pays for it. When a container server is to be served it is
  // started now, beside the rest of the start-up, so its first container does not wait for it.
  const selected = servers.filter((server): server is ContainerServerConfig => server.transport !== 'http');
  // Set just below; the runtime tells it of starts only once it is built, later.
  let early: EarlyContainers | undefined;
  let runtime: Promise<ContainerRuntime> | undefined;
  let runtimeCode: Promise<typeof import('@ringfence/gateway/runtime')> | undefined;
  const containerRuntime = (): Promise<ContainerRuntime> => {
    runtimeCode ??= import('@ringfence/gateway/runtime');
    runtime ??= runtimeCode.then(({ createContainerRuntime }) => {
      startupMark('serving: container runtime loaded');
      return createContainerRuntime({
        home,
        session,
        log: reportLine,
        audit,
        policy,
        workspaceRoots: workspaceRoots(options.allowMounts),
        // Their images are inspected beside the engine probe (each is still checked at its start).
        starting: selected,
        onStartSent: (name) => early?.startSent(name),
        ...(options.metrics ? { observer: options.metrics.runtime } : {}),
      });
    });
    return runtime;
  };
  const ownServer = options.sandboxImages
    ? await ownServerOf(
        home,
        policy,
        options.sandboxImages,
        options.allowMounts ?? [],
        options.sandboxAddresses ?? [],
        containerRuntime,
        options.sandboxPersistent === true,
        options.sandboxSaveCap,
      )
    : undefined;
  early = new EarlyContainers(selected, containerRuntime);
  const begun = early;
  // Its code alone first: once it is loaded, the engine probe, the reaper's start and then the
  // containers' are under way before this thread loads anything else.
  if (selected.length > 0) await runtimeCode;
  // Loaded after the runtime's start was sent off: the engine, the reaper process and the
  // schema workers get on while this thread loads the upstream clients and the served endpoint.
  // Each load holds this thread; between them, the engine's answers that came in are handled, so
  // each step of the containers' start (probe, sweep, create, attach, start: each waits for the
  // one before) is sent on without waiting for all the loading.
  const { upstreamFactory } = await import('@ringfence/gateway/upstream');
  await engineTurn(selected.length);
  const { oauthAuthorizers } = await import('./oauth-holders.js');
  const { CredentialStore, resolveSecretReferences, StoredCredentials } = await import(
    '@ringfence/gateway/credentials'
  );
  await engineTurn(selected.length);
  const { OAuthTokenStore } = await import('@ringfence/gateway/remote-auth');
  await engineTurn(selected.length);
  const credentials = new CredentialStore(home);
  const createUpstream = upstreamFactory({
    // A remote server's `@secret:` headers are read from the store at each connection.
    resolveSecrets: (config) => resolveSecretReferences(config, credentials),
    container: (config) => early.take(config),
    // Each server's era, probed once and kept: later starts speak it without probing.
    eras: new EraStore(home),
    // An OAuth registration's requests carry its held token (remote-auth/holder.ts).
    // The organisation's list of authorization servers is checked at each use too, not only at
    // login: a policy that drops an issuer stops its tokens at the next request.
    authorizer: oauthAuthorizers(home, audit, verifiedPolicy),
  });
  return {
    gatewayOptions: {
      home,
      guard,
      audit,
      createUpstream,
      policy,
      log: reportLine,
      session,
      servers,
      // What the egress scan refuses to send anywhere it is not bound, and the ingress scan
      // removes from results: the stored credentials and the OAuth tokens ringfence holds.
      credentials: new StoredCredentials(credentials, new OAuthTokenStore(home)),
      ...(ownServer ? { ownServer } : {}),
    },
    containersUnderWay: () => begun.underWay(),
    close: async () => {
      await begun.stop();
      const built = runtime ? await runtime.catch(() => undefined) : undefined;
      if (built?.available) built.flushAudit();
      await guard.close();
      await audit.close();
      await streaming?.close();
    },
  };
}

/**
 * One turn of the event loop when containers are starting (nothing waits on the engine otherwise):
 * what it answered meanwhile is handled before this thread loads more code.
 */
export function engineTurn(containers: number): Promise<void> | undefined {
  return containers > 0 ? new Promise((resolve) => setImmediate(resolve)) : undefined;
}

async function loadAuditExportSettings(home: string) {
  if (!existsSync(join(home, 'audit-export.json'))) return [];
  const { loadExportSettings } = await import('@ringfence/gateway/audit-export');
  return loadExportSettings(home);
}

/** Streams the log to each configured sink while the gateway runs (none configured: nothing loaded). */
async function auditStreaming(home: string, sinks: Awaited<ReturnType<typeof loadAuditExportSettings>>) {
  if (sinks.length === 0) return undefined;
  const { startAuditStreaming } = await import('@ringfence/gateway/audit-export');
  return startAuditStreaming({ home, auditPath: defaultAuditPath(), sinks, report: reportLine });
}

/**
 * ringfence's own server (`mcp serve --sandbox-tools`): its sandboxes are made by the same
 * container runtime as contained servers (started on first need), may be made from the images
 * named, and may mount only what `--allow-mount` names: not the working directory, which servers
 * may always mount, because a sandbox is made by the assistant, not registered by the person.
 */
async function ownServerOf(
  home: string,
  policy: PolicyView,
  images: readonly string[],
  allowMounts: readonly string[],
  allowAddresses: readonly string[],
  runtime: () => Promise<ContainerRuntime>,
  persistent: boolean,
  saveCapBytes?: number,
): Promise<Upstream> {
  const { OwnServer, Sandboxes } = await import('@ringfence/gateway/sandbox');
  return new OwnServer(
    new Sandboxes({
      home,
      policy,
      images,
      mountRoots: workspaceRoots(allowMounts).slice(1),
      persistent,
      allowAddresses,
      ...(saveCapBytes !== undefined ? { saveCapBytes } : {}),
      engine: async () => {
        const built = await runtime();
        return built.available ? built.shared : { unavailable: built.reason };
      },
    }),
  );
}

/**
 * A contained server whose runtime is built when it is first started. Without an engine it fails
 * that start with the engine's own answer and the command that finds the fix. `start` runs once:
 * `mcp serve` may begin it before the gateway asks (see `EarlyContainers`), and the gateway's own
 * call then joins it. An exit before anyone listened is told to the first listener.
 */
export class DeferredContainedServer implements ContainedServer {
  private inner: ContainedServer | undefined;
  private starting: Promise<ContainedStdio> | undefined;
  private stopped = false;
  private exited: string | undefined;
  private readonly exitListeners: ((reason: string) => void)[] = [];

  constructor(
    readonly config: ContainerServerConfig,
    private readonly runtime: () => Promise<ContainerRuntime>,
  ) {}

  start(): Promise<ContainedStdio> {
    this.starting ??= this.launch();
    return this.starting;
  }

  private async launch(): Promise<ContainedStdio> {
    const runtime = await this.runtime();
    if (!runtime.available) {
      throw new UpstreamError(
        'CONTAINERS_UNAVAILABLE',
        `contained servers are unavailable: no container engine answers (${runtime.reason}). Run \`ringfence doctor\` for the fix`,
      );
    }
    // stop() while the runtime was being built: nothing was created, and nothing may be.
    if (this.stopped)
      throw new UpstreamError(
        'SERVER_STOPPED_WHILE_STARTING',
        'the server was stopped while it was starting',
      );
    const inner = runtime.launch(this.config);
    inner.onExit((reason) => {
      this.exited = reason;
      for (const listener of this.exitListeners) listener(reason);
    });
    this.inner = inner;
    return inner.start();
  }

  onExit(listener: (reason: string) => void): void {
    this.exitListeners.push(listener);
    if (this.exited !== undefined) listener(this.exited);
  }

  stderr(): string {
    return this.inner?.stderr() ?? '';
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.inner?.stop();
  }
}

/**
 * How long mcp serve waits for its container servers' starts to be sent before it loads the
 * endpoint's code anyway: far above a normal start's few hundred ms, far below a start's budget.
 */
export const UNDER_WAY_WAIT_MS = 5_000;

/**
 * The container servers `mcp serve` will start, begun as soon as the runtime is on its way rather
 * than once the served endpoint's code is loaded: container create and start, and the server's own
 * boot, then run beside that loading. Nothing is listed from them before the gateway takes them
 * and pins their tools as always. They are begun from the same registrations the gateway is given
 * (`ServingDeps.gatewayOptions.servers`), so the gateway takes each by name; a server it does not
 * take is stopped at close.
 */
export class EarlyContainers {
  private readonly waiting = new Map<string, DeferredContainedServer>();
  private readonly sent = new Map<string, () => void>();
  private readonly begun: Promise<void>;

  constructor(
    configs: readonly ContainerServerConfig[],
    private readonly runtime: () => Promise<ContainerRuntime>,
  ) {
    const begun: Promise<void>[] = [];
    for (const config of configs) {
      const server = new DeferredContainedServer(config, runtime);
      const started = server.start();
      // Its failure is the gateway's to report, when it takes the server.
      started.catch(() => {});
      begun.push(
        Promise.race([
          new Promise<void>((resolve) => this.sent.set(config.name, resolve)),
          started.then(
            () => {},
            () => {},
          ),
        ]),
      );
      this.waiting.set(config.name, server);
    }
    this.begun = Promise.all(begun).then(() => {});
  }

  /** The runtime sent the start of this server's container to the engine. */
  startSent(name: string): void {
    this.sent.get(name)?.();
  }

  /**
   * Every server begun here has had its container's start sent, or failed, or UNDER_WAY_WAIT_MS
   * passed. Bounded: the engine client has no timeout of its own, and an engine that never answers
   * a step before the start (a create, a network) would otherwise hold the served endpoint back
   * for good, when the gateway's own start budget (60 s) would have reported that server and
   * served the others.
   */
  underWay(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, UNDER_WAY_WAIT_MS);
      timer.unref();
    });
    return Promise.race([this.begun, bound]).finally(() => clearTimeout(timer));
  }

  /**
   * The server begun for this registration. The gateway passes it on with what the policy allows
   * of server requests, which the container does not see. The gateway serves the same list the
   * early containers were begun from, so every registration has one; the fallback (begin it now)
   * keeps a call from another list working rather than refused.
   */
  take(config: ContainerServerConfig): DeferredContainedServer {
    const early = this.waiting.get(config.name);
    this.waiting.delete(config.name);
    return early ?? new DeferredContainedServer(config, this.runtime);
  }

  /** Stops whatever was begun and never taken. */
  async stop(): Promise<void> {
    const left = [...this.waiting.values()];
    this.waiting.clear();
    await Promise.all(left.map((server) => server.stop().catch(() => {})));
  }
}
