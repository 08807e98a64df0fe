import type Docker from 'dockerode';
import { currentOwner, LABEL } from '../runtime/labels.js';
import type { SharedEngine } from '../runtime/runtime.js';
import type { CheckpointRequest, RestoreRequest } from './args-save.js';
import { SandboxError } from './errors.js';
import { recreateFrom } from './recreate.js';
import type { Sandboxes, SandboxSummary } from './sandboxes.js';
import {
  baseImageOf,
  checkpointTag,
  describeSaved,
  homeId,
  ImageSizes,
  isOurCheckpoint,
  isOurSnapshot,
  newCheckpointId,
  SAVED_LABEL,
  type SavedImage,
  type SavedRole,
  savedImageOf,
  savedImages,
  savedLabels,
  snapshotTag,
} from './saved.js';

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/**
 * Save and undo on the engine's own primitives: a checkpoint or a snapshot is the sandbox's
 * container committed to an image (the engine pauses it meanwhile); a rewind replaces the
 * container by one made from a checkpoint with the very settings it had; a restore is a
 * `sandbox_create`, with all its checks, from a snapshot. What they may take together is capped.
 */
export class SaveAndUndo {
  private readonly home: string;
  private sizes: ImageSizes | undefined;

  constructor(private readonly sandboxes: Sandboxes) {
    this.home = homeId(sandboxes.homeDir);
  }

  private sizesOf(engine: SharedEngine): ImageSizes {
    this.sizes ??= new ImageSizes(engine.docker);
    return this.sizes;
  }

  /** Everything saved that counts against the cap: this gateway's checkpoints and this home's snapshots. */
  private async saved(engine: SharedEngine): Promise<SavedImage[]> {
    const owner = ownerOf(engine);
    const ours = (l: Record<string, string> | undefined) =>
      isOurCheckpoint(l, owner) || isOurSnapshot(l, this.home);
    return savedImages(engine.docker, ours, this.sizesOf(engine));
  }

  async checkpoint(request: CheckpointRequest): Promise<Record<string, unknown>> {
    const id = newCheckpointId();
    const saved = await this.commit('checkpoint', request.name, id, request.note);
    return describeSaved(saved);
  }

  async checkpoints(name: string): Promise<Record<string, unknown>[]> {
    const engine = await this.sandboxes.engine();
    await this.sandboxes.find(engine, name);
    const owner = ownerOf(engine);
    const ours = (l: Record<string, string> | undefined) => isOurCheckpoint(l, owner, name);
    return (await savedImages(engine.docker, ours, this.sizesOf(engine))).map(describeSaved);
  }

  async rewind(name: string, checkpoint: string): Promise<Record<string, unknown>> {
    const engine = await this.sandboxes.engine();
    const [found, image] = await Promise.all([
      this.sandboxes.find(engine, name),
      this.checkpointImage(engine, name, checkpoint),
    ]);
    // A rewind starts a new container with the old one's mounts: the engine resolves them again.
    await this.sandboxes.recheck(engine, found.Id);
    const started = Date.now();
    const { removing } = await recreateFrom(engine.docker, found.Id, image.Id);
    // The old container is stopped and renamed: no tool finds it. Its removal (its layer's bytes
    // deleted) finishes after this answer; the sandbox's delete and the gateway's close wait for it.
    this.sandboxes.settleLater(removing);
    return { sandbox: name, rewound_to: checkpoint, duration_ms: Date.now() - started };
  }

  async snapshot(name: string, snapshot: string): Promise<Record<string, unknown>> {
    return describeSaved(await this.commit('snapshot', name, snapshot));
  }

  async snapshots(): Promise<{ snapshots: Record<string, unknown>[]; cap: Record<string, number> }> {
    const engine = await this.sandboxes.engine();
    const all = await this.saved(engine);
    return {
      snapshots: all.filter((s) => s.role === 'snapshot').map(describeSaved),
      cap: { cap_bytes: this.sandboxes.saveCapBytes, used_bytes: total(all) },
    };
  }

  async restore(request: RestoreRequest): Promise<SandboxSummary> {
    const engine = await this.sandboxes.engine();
    const snapshot = await this.snapshotImage(engine, request.snapshot);
    const base = snapshot.Config?.Labels?.[SAVED_LABEL.baseImage] ?? '';
    const command = request.create.command ?? snapshot.Config?.Cmd ?? undefined;
    if (!command || command.length === 0)
      throw new SandboxError(
        'SANDBOX_ARGUMENTS',
        `the snapshot "${request.snapshot}" records no command; give one in command (argv).`,
      );
    // The base image is checked as sandbox_create checks any image (still allowed, still here,
    // admitted by the policy); the network and mounts asked for are checked by the same code.
    return this.sandboxes.create(
      { ...request.create, image: base, command: [...command] },
      { imageId: snapshot.Id },
    );
  }

  async removeSnapshot(snapshot: string): Promise<Record<string, unknown>> {
    const engine = await this.sandboxes.engine();
    const image = await this.snapshotImage(engine, snapshot);
    const users = await engine.docker.listContainers({ all: true, filters: { ancestor: [image.Id] } });
    if (users.length > 0)
      throw new SandboxError(
        'SANDBOX_EXISTS',
        `the snapshot "${snapshot}" is in use by ${users.map((c) => c.Names?.[0]?.replace(/^\//, '') ?? c.Id).join(', ')}; delete that sandbox first (sandbox_delete, or \`ringfence sandbox rm\`).`,
      );
    // Its own name only, never by id: another name the person gave it stays (and keeps the image).
    const ref = snapshotTag(this.home, snapshot);
    await engine.docker.getImage(ref).remove();
    return { removed: snapshot, image: ref, size_bytes: image.Size };
  }

  /** Commit, then hold the result to the cap (its size is known only once it exists). */
  private async commit(role: SavedRole, name: string, key: string, note?: string): Promise<SavedImage> {
    const engine = await this.sandboxes.engine();
    const cap = this.sandboxes.saveCapBytes;
    const [found, before] = await Promise.all([this.sandboxes.find(engine, name), this.saved(engine)]);
    if (cap === 0 || total(before) >= cap) throw overCap(cap, total(before));
    if (role === 'snapshot' && before.some((s) => s.role === 'snapshot' && s.key === key))
      throw new SandboxError(
        'SANDBOX_EXISTS',
        `a snapshot "${key}" already exists; choose another snapshot_name, or remove it with snapshot_remove.`,
      );
    const ref =
      role === 'checkpoint' ? checkpointTag(engine.session, name, key) : snapshotTag(this.home, key);
    if (await exists(engine.docker, ref))
      throw new SandboxError(
        'SANDBOX_EXISTS',
        `the image name ${ref} is taken by an image ringfence did not make here; ${role === 'checkpoint' ? 'try again' : 'choose another snapshot_name'}.`,
      );
    const [repo, tag] = [ref.slice(0, ref.lastIndexOf(':')), ref.slice(ref.lastIndexOf(':') + 1)];
    const labels = savedLabels(role, {
      session: engine.session,
      sandbox: name,
      baseImage: baseImageOf(found.Labels, found.Image),
      home: this.home,
      ...(role === 'checkpoint' ? { checkpoint: key } : { snapshot: key }),
      ...(note ? { note } : {}),
    });
    try {
      // Labels go in the body (the image's config), never as `changes` instructions a note could
      // smuggle a USER or ENV line into. The engine pauses the container while it commits.
      await engine.docker.getContainer(found.Id).commit({
        _query: {
          container: found.Id,
          repo,
          tag,
          pause: true,
          comment: `ringfence ${role} of sandbox ${name}`,
        },
        _body: { Labels: labels },
      });
    } catch (error) {
      throw new SandboxError(
        'SANDBOX_RUN',
        `saving the sandbox "${name}" failed: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    const committed = await engine.docker.getImage(ref).inspect();
    const sizes = this.sizesOf(engine);
    sizes.remember(committed.Id, committed.Size);
    const made = savedImageOf(
      {
        Id: committed.Id,
        Size: committed.Size,
        Created: Math.floor(Date.parse(committed.Created) / 1000),
        Labels: committed.Config?.Labels ?? {},
        RepoTags: committed.RepoTags ?? [],
      },
      committed.Parent ? await sizes.of(committed.Parent) : undefined,
    );
    if (total(before) + made.addedBytes > cap) {
      await engine.docker
        .getImage(ref)
        .remove()
        .catch(() => {});
      throw overCap(cap, total(before), made.addedBytes);
    }
    return made;
  }

  /** By the name ringfence gave it, and then by its labels: a person's image under that name is not ours. */
  private async checkpointImage(engine: SharedEngine, name: string, checkpoint: string) {
    const owner = ownerOf(engine);
    let found: Docker.ImageInspectInfo | undefined;
    try {
      found = await engine.docker.getImage(checkpointTag(engine.session, name, checkpoint)).inspect();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
    const labels = found?.Config?.Labels ?? undefined;
    if (!found || !isOurCheckpoint(labels, owner, name) || labels?.[SAVED_LABEL.checkpoint] !== checkpoint)
      throw new SandboxError(
        'SANDBOX_UNKNOWN',
        `the sandbox "${name}" has no checkpoint "${checkpoint}"; see its checkpoints with sandbox_checkpoint_list.`,
      );
    return found;
  }

  private async snapshotImage(
    engine: SharedEngine,
    snapshot: string,
  ): Promise<Docker.ImageInspectInfo & { RepoTags?: string[] }> {
    const candidates = await engine.docker.listImages({
      filters: { label: [`${LABEL.role}=snapshot`, `${SAVED_LABEL.snapshot}=${snapshot}`] },
    });
    // By its labels and under the very name ringfence gave it: a person's image built FROM a
    // snapshot carries the same labels, never that name, and is neither restored nor removed.
    const tag = snapshotTag(this.home, snapshot);
    const found = candidates.find(
      (i) => isOurSnapshot(i.Labels ?? undefined, this.home) && (i.RepoTags ?? []).includes(tag),
    );
    if (!found)
      throw new SandboxError(
        'SANDBOX_UNKNOWN',
        `there is no snapshot "${snapshot}"; see them with snapshot_list, or take one with sandbox_snapshot.`,
      );
    return engine.docker.getImage(found.Id).inspect();
  }
}

const ownerOf = (engine: SharedEngine) => currentOwner(engine.session);

const total = (saved: readonly SavedImage[]) => saved.reduce((sum, s) => sum + s.addedBytes, 0);

async function exists(docker: Docker, ref: string): Promise<boolean> {
  try {
    await docker.getImage(ref).inspect();
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

function overCap(cap: number, used: number, wanted?: number): SandboxError {
  if (cap === 0)
    return new SandboxError(
      'SANDBOX_SAVE_CAP',
      'saving sandboxes is off here (the person started ringfence with --sandbox-save-cap 0); the person can allow it with a cap such as --sandbox-save-cap 10g.',
    );
  return new SandboxError(
    'SANDBOX_SAVE_CAP',
    `${wanted === undefined ? 'nothing more can be saved' : `this save (${mib(wanted)}) was not kept`}: checkpoints and snapshots take ${mib(used)} of the ${mib(cap)} the person allows (--sandbox-save-cap). Free room with snapshot_remove, or by deleting a sandbox (its checkpoints go with it), or ask the person for a larger cap.`,
  );
}
