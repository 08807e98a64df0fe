import { createHash, randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import type Docker from 'dockerode';
import { LABEL, type Owner, ownedBy, ownerLabels } from '../runtime/labels.js';
import { hostIdentity } from '../runtime/process-identity.js';
import { OWN_SERVER } from './tools.js';

/**
 * Checkpoints and snapshots are images the engine made by committing a sandbox's container. They
 * live under one repository ringfence owns (`ringfence-saved/…`, never a name a person's build
 * produces) and carry labels saying what they are and whose they are. Only an image whose labels
 * say both is ever listed, used or removed: a person's image that merely carries the same labels
 * (or sits under the same repository) names no owner of ours, so it is never found.
 */
export const SAVED_REPOSITORY = 'ringfence-saved';
export const CHECKPOINT_REPOSITORY = `${SAVED_REPOSITORY}/checkpoint`;
export const SNAPSHOT_REPOSITORY = `${SAVED_REPOSITORY}/snapshot`;

export const SAVED_LABEL = {
  /** On a checkpoint: its id, unique within the sandbox. */
  checkpoint: 'ringfence.checkpoint',
  /** On a snapshot: its name, unique within the home. */
  snapshot: 'ringfence.snapshot',
  /** The assistant's own words for a checkpoint (free text, a label value only). */
  note: 'ringfence.checkpoint_label',
  /** On a snapshot: which ringfence home owns it (a hash of the home's real path). */
  home: 'ringfence.home',
  /** The image the sandbox was made from, exactly as allowed (`--sandbox-image`). */
  baseImage: 'ringfence.sandbox_image',
} as const;

/** The sandbox container's own label naming its image (sandboxes.ts), read when committing. */
const SANDBOX_IMAGE_LABEL = 'ringfence.sandbox_image';

export type SavedRole = 'checkpoint' | 'snapshot';

export const newCheckpointId = () => randomBytes(4).toString('hex');

/** Which home owns a snapshot: stable for one RINGFENCE_HOME on one host, opaque to others. */
export function homeId(home: string): string {
  let real = home;
  try {
    real = realpathSync(home);
  } catch {
    /* a home not made yet is named by its path */
  }
  return createHash('sha256').update(real).digest('hex').slice(0, 12);
}

export const checkpointTag = (session: string, sandbox: string, id: string) =>
  `${CHECKPOINT_REPOSITORY}:${session}-${sandbox}-${id}`;
export const snapshotTag = (home: string, snapshot: string) => `${SNAPSHOT_REPOSITORY}:${home}-${snapshot}`;

/**
 * The labels a commit gives the image. The engine copies the container's labels into the image
 * first (its owner labels among them); these override. A checkpoint is owned by this gateway
 * process exactly like its sandbox; a snapshot by the home (pid and start time blanked, so no
 * gateway's reaper or sweep ever takes it for its own), and the other kind's labels blanked so an
 * image made from a restored snapshot is never mistaken for that snapshot.
 */
export function savedLabels(
  role: SavedRole,
  options: {
    session: string;
    sandbox: string;
    baseImage: string;
    home: string;
    checkpoint?: string;
    note?: string;
    snapshot?: string;
  },
): Record<string, string> {
  const owner = ownerLabels(OWN_SERVER, options.session, 'sandbox');
  // Never `ringfence.persistent=1`, even from a persistent sandbox: a checkpoint is this gateway's
  // (it goes at its close; one a rewound persistent sandbox still runs from is left by the engine
  // until that sandbox goes, then the sweep takes it), and a snapshot is the home's by its own label.
  const common = {
    [LABEL.persistent]: '',
    ...owner,
    [LABEL.role]: role,
    [LABEL.sandbox]: options.sandbox,
    [SAVED_LABEL.baseImage]: options.baseImage,
  };
  if (role === 'checkpoint')
    return {
      ...common,
      [SAVED_LABEL.checkpoint]: options.checkpoint ?? '',
      [SAVED_LABEL.note]: options.note ?? '',
      [SAVED_LABEL.snapshot]: '',
      [SAVED_LABEL.home]: '',
    };
  return {
    ...common,
    [LABEL.pid]: '',
    [LABEL.pidStart]: '',
    [SAVED_LABEL.snapshot]: options.snapshot ?? '',
    [SAVED_LABEL.home]: options.home,
    [SAVED_LABEL.checkpoint]: '',
    [SAVED_LABEL.note]: '',
  };
}

export const baseImageOf = (containerLabels: Record<string, string> | undefined, fallback: string) =>
  containerLabels?.[SANDBOX_IMAGE_LABEL] ?? fallback;

/** A checkpoint of this gateway's sandbox `sandbox` (any, when undefined). */
export function isOurCheckpoint(labels: Record<string, string> | undefined, owner: Owner, sandbox?: string) {
  return (
    ownedBy(labels, owner) &&
    labels?.[LABEL.role] === 'checkpoint' &&
    !!labels[SAVED_LABEL.checkpoint] &&
    (sandbox === undefined ? !!labels[LABEL.sandbox] : labels[LABEL.sandbox] === sandbox)
  );
}

/** A snapshot this home made on this host. */
export function isOurSnapshot(
  labels: Record<string, string> | undefined,
  home: string,
  host = hostIdentity(),
) {
  return (
    labels?.[LABEL.managed] === '1' &&
    labels[LABEL.server] === OWN_SERVER &&
    labels[LABEL.role] === 'snapshot' &&
    labels[SAVED_LABEL.home] === home &&
    labels[LABEL.host] === host &&
    !!labels[SAVED_LABEL.snapshot]
  );
}

export interface SavedImage {
  readonly role: SavedRole;
  /** The checkpoint's id or the snapshot's name. */
  readonly key: string;
  readonly sandbox: string;
  readonly note?: string;
  readonly baseImage: string;
  readonly image: string;
  readonly tag: string;
  readonly created: string;
  /** The image's size as the engine reports it (its base image's layers included). */
  readonly sizeBytes: number;
  /** What the commit added: its size less its parent image's (the sandbox's changes). */
  readonly addedBytes: number;
  readonly labels: Record<string, string>;
}

/** An image's size by its id: ids name content, so a size once read never changes. */
export class ImageSizes {
  private readonly known = new Map<string, number>();

  constructor(private readonly docker: Docker) {}

  remember(id: string, size: number): void {
    this.known.set(id, size);
  }

  async of(id: string): Promise<number | undefined> {
    const known = this.known.get(id);
    if (known !== undefined) return known;
    try {
      const size = (await this.docker.getImage(id).inspect()).Size;
      this.known.set(id, size);
      return size;
    } catch {
      return undefined;
    }
  }
}

/** A saved image as a tool reports it, from the engine's listing or inspect of it. */
export function savedImageOf(
  image: { Id: string; Size: number; Created: number; Labels: Record<string, string>; RepoTags: string[] },
  parentSize: number | undefined,
): SavedImage {
  const labels = image.Labels;
  const role = labels[LABEL.role] as SavedRole;
  const tag = image.RepoTags.find((t) => t.startsWith(`${SAVED_REPOSITORY}/`)) ?? '';
  const note = labels[SAVED_LABEL.note];
  return {
    role,
    key: role === 'checkpoint' ? labels[SAVED_LABEL.checkpoint]! : labels[SAVED_LABEL.snapshot]!,
    sandbox: labels[LABEL.sandbox] ?? '',
    ...(note ? { note } : {}),
    baseImage: labels[SAVED_LABEL.baseImage] ?? '',
    image: image.Id,
    tag,
    created: new Date(image.Created * 1000).toISOString(),
    sizeBytes: image.Size,
    addedBytes: parentSize === undefined ? image.Size : Math.max(0, image.Size - parentSize),
    labels,
  };
}

/**
 * The saved images `keep` picks, newest first: one listing of ringfence's own images (the engine
 * filters by label; `keep` decides by owner), and their parents' sizes for what each added.
 */
export async function savedImages(
  docker: Docker,
  keep: (labels: Record<string, string> | undefined) => boolean,
  sizes: ImageSizes = new ImageSizes(docker),
): Promise<SavedImage[]> {
  const listed = await docker.listImages({
    filters: { label: [`${LABEL.managed}=1`, `${LABEL.server}=${OWN_SERVER}`] },
  });
  for (const image of listed) sizes.remember(image.Id, image.Size);
  // Under ringfence's own repository only: an image a person built FROM a saved one inherits its
  // labels (owner, role, name), never its repository, and is never taken for it.
  const picked = listed
    .filter((i) => (i.RepoTags ?? []).some((t) => t.startsWith(`${SAVED_REPOSITORY}/`)))
    .filter((i) => keep(i.Labels ?? undefined))
    .sort((a, b) => b.Created - a.Created);
  return Promise.all(
    picked.map(async (i) =>
      savedImageOf(
        { Id: i.Id, Size: i.Size, Created: i.Created, Labels: i.Labels ?? {}, RepoTags: i.RepoTags ?? [] },
        i.ParentId ? await sizes.of(i.ParentId) : undefined,
      ),
    ),
  );
}

/** What a saved image is shown as in a tool's result. */
export function describeSaved(saved: SavedImage): Record<string, unknown> {
  return {
    ...(saved.role === 'checkpoint' ? { checkpoint: saved.key } : { snapshot: saved.key }),
    sandbox: saved.sandbox,
    ...(saved.note ? { label: saved.note } : {}),
    image: saved.tag || saved.image,
    base_image: saved.baseImage,
    created: saved.created,
    size_bytes: saved.sizeBytes,
    added_bytes: saved.addedBytes,
  };
}
