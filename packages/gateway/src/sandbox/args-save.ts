import { type CreateRequest, parseCreate, sandboxName } from './args.js';
import { SandboxError } from './errors.js';

/** The save-and-undo tools' arguments, checked again here (as args.ts does for the others). */
export const CHECKPOINT_ID = /^[0-9a-f]{8}$/;

export interface CheckpointRequest {
  readonly name: string;
  readonly note?: string;
}

export interface RestoreRequest {
  readonly snapshot: string;
  /** The new sandbox, as sandbox_create would be asked for; `image` is filled from the snapshot. */
  readonly create: Omit<CreateRequest, 'image' | 'command'> & { readonly command?: readonly string[] };
}

const refuse = (message: string): never => {
  throw new SandboxError('SANDBOX_ARGUMENTS', message);
};

function onlyKeys(args: Record<string, unknown>, allowed: readonly string[], tool: string): void {
  for (const key of Object.keys(args))
    if (!allowed.includes(key)) refuse(`${tool} takes no argument "${key}"; it takes ${allowed.join(', ')}.`);
}

function snapshotName(value: unknown, what: string): string {
  try {
    return sandboxName(value);
  } catch {
    return refuse(`${what} must be 1-32 lower-case letters, digits or "-", starting with a letter or digit.`);
  }
}

export function parseCheckpoint(args: Record<string, unknown>): CheckpointRequest {
  onlyKeys(args, ['name', 'label'], 'sandbox_checkpoint');
  const name = sandboxName(args.name);
  if (args.label === undefined) return { name };
  // Free text, stored only as a label value (never parsed by the engine as an instruction).
  if (
    typeof args.label !== 'string' ||
    args.label.length === 0 ||
    args.label.length > 200 ||
    args.label.includes('\0')
  )
    refuse('label must be a note of 1-200 characters.');
  return { name, note: args.label as string };
}

export function parseRewind(args: Record<string, unknown>): { name: string; checkpoint: string } {
  onlyKeys(args, ['name', 'checkpoint'], 'sandbox_rewind');
  const name = sandboxName(args.name);
  if (typeof args.checkpoint !== 'string' || !CHECKPOINT_ID.test(args.checkpoint))
    refuse('checkpoint must be an id sandbox_checkpoint_list lists (8 hex digits).');
  return { name, checkpoint: args.checkpoint as string };
}

export function parseSnapshot(args: Record<string, unknown>): { name: string; snapshot: string } {
  onlyKeys(args, ['name', 'snapshot_name'], 'sandbox_snapshot');
  return { name: sandboxName(args.name), snapshot: snapshotName(args.snapshot_name, 'snapshot_name') };
}

export function parseSnapshotOnly(args: Record<string, unknown>, tool: string): string {
  onlyKeys(args, ['snapshot'], tool);
  return snapshotName(args.snapshot, 'snapshot');
}

/** A restore is a create (its network, mounts and command checked by the same code) from a snapshot. */
export function parseRestore(args: Record<string, unknown>): RestoreRequest {
  onlyKeys(args, ['snapshot', 'name', 'hosts', 'egress', 'mounts', 'command'], 'snapshot_restore');
  const snapshot = snapshotName(args.snapshot, 'snapshot');
  const { snapshot: _, ...rest } = args;
  const parsed = parseCreate({ ...rest, image: 'from-snapshot' });
  const { image: _image, command, ...create } = parsed;
  return { snapshot, create: { ...create, ...(args.command !== undefined ? { command } : {}) } };
}
