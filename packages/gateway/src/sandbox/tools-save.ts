import { argumentsOf, EGRESS, HOSTS, MOUNTS, NAME } from './schema-parts.js';

/**
 * Save and undo (docs/sandboxes.md#save-and-undo): checkpoints of one sandbox, rewound to in
 * place, and snapshots that outlive it and make new sandboxes. Spread into OWN_TOOLS (tools.ts).
 */
const SNAPSHOT = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9-]{0,31}$',
  description: 'The snapshot name: 1-32 lower-case letters, digits or "-", unique among your snapshots.',
};

const CHECKPOINT = {
  type: 'string',
  pattern: '^[0-9a-f]{8}$',
  description: 'A checkpoint id, as sandbox_checkpoint returned it or sandbox_checkpoint_list lists it.',
};

const SAVE_NOTE =
  'Committing pauses the sandbox for the moment it takes; it saves the files in the container itself, never a mounted directory and never /tmp (a tmpfs).';

export const SAVE_TOOLS: readonly Record<string, unknown>[] = [
  {
    name: 'sandbox_checkpoint',
    description: `Saves a sandbox's files as a checkpoint to rewind to later, and reports its size. ${SAVE_NOTE} Touches the container engine: commits that sandbox's container to an image under ringfence-saved/checkpoint, labelled with the sandbox and owned by this gateway; it goes when the sandbox is deleted or this gateway ends. Refused beyond the person's save cap.`,
    inputSchema: argumentsOf(
      {
        name: NAME,
        label: { type: 'string', minLength: 1, maxLength: 200, description: 'Your own note for it.' },
      },
      ['name'],
    ),
  },
  {
    name: 'sandbox_checkpoint_list',
    description:
      "Lists a sandbox's checkpoints, newest first, with their sizes. Touches nothing; reads the engine's image list (this gateway's checkpoints only).",
    inputSchema: argumentsOf({ name: NAME }, ['name']),
  },
  {
    name: 'sandbox_rewind',
    description:
      "Puts a sandbox's files back as they were at a checkpoint: its container is replaced by one made from the checkpoint with exactly the same settings (hardening, network, mounts, command). Processes running in it stop; the checkpoint stays, to rewind to again. Touches the container engine: that sandbox's container only.",
    inputSchema: argumentsOf({ name: NAME, checkpoint: CHECKPOINT }, ['name', 'checkpoint']),
  },
  {
    name: 'sandbox_snapshot',
    description: `Saves a sandbox's files as a named snapshot that outlives the sandbox and this gateway: snapshot_restore makes new sandboxes from it. ${SAVE_NOTE} Touches the container engine: commits that sandbox's container to an image under ringfence-saved/snapshot, labelled as this ringfence home's; it stays until snapshot_remove (or the person removes it). Refused beyond the person's save cap.`,
    inputSchema: argumentsOf({ name: NAME, snapshot_name: SNAPSHOT }, ['name', 'snapshot_name']),
  },
  {
    name: 'snapshot_list',
    description:
      "Lists the snapshots of this ringfence home, newest first, with their sizes, and the save cap. Touches nothing; reads the engine's image list (ringfence-made snapshots only).",
    inputSchema: argumentsOf({}),
  },
  {
    name: 'snapshot_restore',
    description:
      'Makes a new sandbox from a snapshot, checked exactly as sandbox_create is: the image it was made from must still be allowed, no network unless hosts or egress ask (within the policy), mounts only under --allow-mount. Touches the container engine as sandbox_create does.',
    inputSchema: {
      type: 'object',
      properties: {
        snapshot: SNAPSHOT,
        name: NAME,
        hosts: HOSTS,
        egress: EGRESS,
        mounts: MOUNTS,
        command: {
          type: 'array',
          minItems: 1,
          maxItems: 256,
          items: { type: 'string', maxLength: 8192 },
          description: 'The main process; default: the command of the sandbox the snapshot was taken of.',
        },
      },
      required: ['snapshot', 'name'],
      additionalProperties: false,
    },
  },
  {
    name: 'snapshot_remove',
    description:
      'Removes a snapshot. Refused while a sandbox made from it exists (delete that first). Touches the container engine: removes that image only (a ringfence-made snapshot of this home).',
    inputSchema: argumentsOf({ snapshot: SNAPSHOT }, ['snapshot']),
  },
];
