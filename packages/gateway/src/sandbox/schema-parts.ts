/**
 * Schema parts more than one tool takes (tools.ts, tools-save.ts): a sandbox's name, what a new
 * sandbox may reach and mount, described once so `sandbox_create` and `snapshot_restore` can never drift apart.
 */
export const NAME = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9-]{0,31}$',
  description: 'The sandbox name: 1-32 lower-case letters, digits or "-".',
};

export const HOSTS = {
  type: 'array',
  maxItems: 64,
  items: { type: 'string', minLength: 1, maxLength: 253 },
  description: 'Hosts the sandbox may reach (through the egress proxy); absent: no network.',
};

export const EGRESS = {
  type: 'string',
  enum: ['any'],
  description: '"any": an open network, where the policy allows.',
};

export const MOUNTS = {
  type: 'array',
  maxItems: 16,
  items: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, maxLength: 4096 },
      mode: { type: 'string', enum: ['ro', 'rw'] },
    },
    required: ['path'],
    additionalProperties: false,
  },
  description:
    'Directories under an --allow-mount directory, mounted at /workspace/<path relative to it>; rw only where that directory allows writing. Default mode: ro.',
};

/** An object schema taking exactly these properties. */
export const argumentsOf = (properties: Record<string, unknown>, required: readonly string[] = []) => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required: [...required] } : {}),
  additionalProperties: false,
});
