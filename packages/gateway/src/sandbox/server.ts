import { DEFAULT_CALL_LIMITS } from '../config/limits.js';
import { UpstreamError } from '../ports/errors.js';
import type {
  CallOptions,
  PromptListing,
  ResourceListing,
  ResourceTemplateListing,
  ToolListing,
  Upstream,
  UpstreamCapabilities,
} from '../ports/upstream.js';
import { LABEL } from '../runtime/labels.js';
import { parseCreate, parseNameOnly, parseNothing, parseRun } from './args.js';
import { parseExec, parseImage, parseLogs } from './args-lifecycle.js';
import { parseCheckpoint, parseRestore, parseRewind, parseSnapshot, parseSnapshotOnly } from './args-save.js';
import { SaveAndUndo } from './checkpoints.js';
import { SandboxError } from './errors.js';
import { parseExplore, parseFork, parseReadFile, parseWriteFile } from './explore-args.js';
import { exploreIn, readFileIn, writeFileIn } from './files.js';
import { forkSandbox } from './fork.js';
import { listImages, pullImage } from './images.js';
import { Lifecycle } from './lifecycle.js';
import type { RunOutcome } from './run.js';
import type { Sandboxes } from './sandboxes.js';
import { MAX_TIMEOUT_SECONDS, OWN_SERVER, OWN_TOOLS } from './tools.js';

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };

const json = (value: unknown): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
});

const NOTHING: UpstreamCapabilities = { prompts: false, completions: false, logging: false };

/**
 * ringfence's own server, `ringfence`, served in-process through the gateway's upstream port: the
 * registry lists it beside the registered servers and every call to it goes through the same
 * pipeline (schema check against its pinned definitions, policy rules naming `server:
 * ringfence`, decision and result audit entries, rendering). It offers tools only.
 */
export class OwnServer implements Upstream {
  readonly name = OWN_SERVER;
  /** Shown in each description's prefix: `[ringfence via ringfence itself]`. */
  readonly destination = 'itself';
  /** A run may take its whole timeout; the pipeline's idle budget must not end it first. */
  readonly limits = {
    ...DEFAULT_CALL_LIMITS,
    idleMs: (MAX_TIMEOUT_SECONDS + 30) * 1000,
    ceilingMs: Math.max(DEFAULT_CALL_LIMITS.ceilingMs, (MAX_TIMEOUT_SECONDS + 30) * 1000),
  };

  private readonly saves: SaveAndUndo;

  private readonly lifecycle: Lifecycle;

  constructor(private readonly sandboxes: Sandboxes) {
    this.saves = new SaveAndUndo(sandboxes);
    this.lifecycle = new Lifecycle(sandboxes);
  }

  async start(): Promise<void> {}

  capabilities(): UpstreamCapabilities {
    return NOTHING;
  }

  async listTools(): Promise<ToolListing> {
    return { tools: OWN_TOOLS.map((tool) => structuredClone(tool)), problems: [] };
  }

  async callTool(name: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    try {
      return await this.call(name, args, options);
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      return {
        content: [{ type: 'text', text: `ringfence refused ${name}: ${error.message}` }],
        isError: true,
      };
    }
  }

  private async call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<unknown> {
    switch (name) {
      case 'ringfence_status':
        parseNothing(args, name);
        return json(await this.status());
      case 'sandbox_create':
        return json({ created: await this.sandboxes.create(parseCreate(args)) });
      case 'sandbox_list':
        parseNothing(args, name);
        return json({ sandboxes: await this.sandboxes.list() });
      case 'sandbox_run': {
        const outcome = await this.sandboxes.run(parseRun(args), {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        });
        return runResult(outcome);
      }
      case 'sandbox_fork':
        return json(await forkSandbox(this.sandboxes, parseFork(args)));
      case 'sandbox_explore':
        return json(await exploreIn(this.sandboxes, parseExplore(args)));
      case 'sandbox_read_file':
        return json(await readFileIn(this.sandboxes, parseReadFile(args)));
      case 'sandbox_write_file':
        return json({ written: await writeFileIn(this.sandboxes, parseWriteFile(args)) });
      case 'sandbox_checkpoint':
        return json({ checkpointed: await this.saves.checkpoint(parseCheckpoint(args)) });
      case 'sandbox_checkpoint_list': {
        const sandbox = parseNameOnly(args, name);
        return json({ sandbox, checkpoints: await this.saves.checkpoints(sandbox) });
      }
      case 'sandbox_rewind': {
        const { name: sandbox, checkpoint } = parseRewind(args);
        return json({ rewound: await this.saves.rewind(sandbox, checkpoint) });
      }
      case 'sandbox_snapshot': {
        const { name: sandbox, snapshot } = parseSnapshot(args);
        return json({ snapshotted: await this.saves.snapshot(sandbox, snapshot) });
      }
      case 'snapshot_list':
        parseNothing(args, name);
        return json(await this.saves.snapshots());
      case 'snapshot_restore': {
        const request = parseRestore(args);
        return json({ restored: { snapshot: request.snapshot, ...(await this.saves.restore(request)) } });
      }
      case 'snapshot_remove':
        return json(await this.saves.removeSnapshot(parseSnapshotOnly(args, name)));
      case 'sandbox_delete':
        return json({ deleted: await this.sandboxes.delete(parseNameOnly(args, name)) });
      case 'sandbox_stop':
        return json({ stopped: await this.lifecycle.stop(parseNameOnly(args, name)) });
      case 'sandbox_start':
        return json({ started: await this.lifecycle.start(parseNameOnly(args, name)) });
      case 'sandbox_logs':
        return json(await this.lifecycle.logs(parseLogs(args)));
      case 'sandbox_exec':
        return json(await this.lifecycle.exec(parseExec(args)));
      case 'image_list':
        parseNothing(args, name);
        return json({ images: await listImages(this.sandboxes) });
      case 'image_pull':
        return json(await pullImage(this.sandboxes, parseImage(args), options.signal));
      default:
        throw new SandboxError('SANDBOX_ARGUMENTS', `ringfence has no tool "${name}".`);
    }
  }

  private async status(): Promise<Record<string, unknown>> {
    let engine: Record<string, unknown>;
    let sandboxes: unknown = [];
    try {
      const shared = await this.sandboxes.engine();
      engine = { kind: shared.engine.kind, version: shared.engine.version, session: shared.session };
      sandboxes = await this.sandboxes.list();
    } catch (error) {
      engine = { unavailable: (error as Error).message };
    }
    return {
      engine,
      images: this.sandboxes.images,
      mount_roots: this.sandboxes.mountRoots.map((root) => ({ path: root.path, writable: root.writable })),
      allow_addresses: this.sandboxes.allowAddresses,
      sandboxes,
      label: LABEL.sandbox,
    };
  }

  async listPrompts(): Promise<PromptListing> {
    return { prompts: [], problems: [] };
  }

  async listResources(): Promise<ResourceListing> {
    return { resources: [], problems: [] };
  }

  async listResourceTemplates(): Promise<ResourceTemplateListing> {
    return { resourceTemplates: [], problems: [] };
  }

  async getPrompt(): Promise<unknown> {
    throw new UpstreamError('UPSTREAM_MALFORMED', 'ringfence offers no prompts');
  }

  async readResource(): Promise<unknown> {
    throw new UpstreamError('UPSTREAM_MALFORMED', 'ringfence offers no resources');
  }

  async complete(): Promise<unknown> {
    throw new UpstreamError('UPSTREAM_MALFORMED', 'ringfence offers no completions');
  }

  async subscribeResource(): Promise<void> {
    throw new UpstreamError('UPSTREAM_MALFORMED', 'ringfence offers no resources');
  }

  async setLoggingLevel(): Promise<void> {}

  // It says nothing on its own: no list changes, logs, server requests or resource updates.
  onResourceUpdated(): void {}
  onListChanged(): void {}
  onLog(): void {}
  onServerRequest(): void {}
  onClosed(): void {}

  /** This gateway's sandboxes go with it (the reaper would remove them too, a moment later). */
  async close(): Promise<void> {
    await this.sandboxes.removeAll().catch(() => {});
  }
}

function runResult(outcome: RunOutcome): ToolResult {
  const stopped =
    outcome.stopped === 'timeout'
      ? 'stopped: it ran past timeout_seconds (the sandbox was restarted; its files stay)'
      : outcome.stopped === 'output-cap'
        ? `stopped: its output passed max_output_bytes after ${outcome.outputBytes} bytes (the sandbox was restarted; its files stay)`
        : outcome.stopped === 'cancelled'
          ? 'stopped: the call was cancelled (the sandbox was restarted; its files stay)'
          : undefined;
  return {
    ...json({
      exit_code: outcome.exitCode,
      ...(stopped ? { stopped } : {}),
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      output_bytes: outcome.outputBytes,
      duration_ms: outcome.durationMs,
    }),
    ...(outcome.stopped || outcome.exitCode !== 0 ? { isError: true } : {}),
  };
}
