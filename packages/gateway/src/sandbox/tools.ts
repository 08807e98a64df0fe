import { EGRESS, HOSTS, MOUNTS, NAME } from './schema-parts.js';
/**
 * ringfence's own tools, served as the server `ringfence` (docs/sandboxes.md). Each description
 * says what it touches. They are listed, pinned by this build, decided and audited like any
 * server's: a policy rule naming `server: ringfence` allows, asks or denies them.
 */
import { EXPLORE_TOOLS } from './tools-explore.js';
import { LIFECYCLE_TOOLS } from './tools-lifecycle.js';
import { SAVE_TOOLS } from './tools-save.js';

export const OWN_SERVER = 'ringfence';

const ARGV = {
  type: 'array',
  minItems: 1,
  maxItems: 256,
  items: { type: 'string', maxLength: 8192 },
};

export const MAX_TIMEOUT_SECONDS = 600;
export const DEFAULT_TIMEOUT_SECONDS = 60;
export const MAX_OUTPUT_BYTES = 1024 * 1024;
export const DEFAULT_OUTPUT_BYTES = 64 * 1024;

export const OWN_TOOLS: readonly Record<string, unknown>[] = [
  {
    name: 'ringfence_status',
    description:
      "Reports ringfence's own state: whether a container engine answers, the images sandboxes may be made from, the directories that may be mounted into them, and this session's sandboxes. Touches nothing; reads the engine's container list (ringfence-made sandboxes only).",
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'sandbox_create',
    description:
      'Creates a sandbox: a hardened container (all capabilities dropped, no new privileges, non-root, memory/pids/CPU limits) from one of the images the person allowed, with a writable root file system. No network unless `hosts` names hosts (reached only through an egress proxy) or `egress` is "any" (where the policy allows). Mounts only directories under `mcp serve --allow-mount`. Touches the container engine: creates one container and, with hosts, an egress sidecar container and two networks, all labelled ringfence.sandbox=NAME. Removed when this gateway ends, unless persistent.',
    inputSchema: {
      type: 'object',
      properties: {
        name: NAME,
        image: {
          type: 'string',
          minLength: 1,
          maxLength: 512,
          description: 'An image `ringfence_status` lists.',
        },
        hosts: HOSTS,
        egress: EGRESS,
        mounts: MOUNTS,
        command: {
          ...ARGV,
          description: 'The main process that keeps the sandbox running; default ["sleep", "infinity"].',
        },
        persistent: {
          type: 'boolean',
          description:
            'true: the sandbox outlives this gateway (the person may remove it with `ringfence sandbox rm`); later gateways of the same person may use it. Only where the person started `mcp serve --sandbox-persistent`; never with hosts.',
        },
      },
      required: ['name', 'image'],
      additionalProperties: false,
    },
  },
  {
    name: 'sandbox_list',
    description:
      "Lists this session's sandboxes (name, image, state, network). Touches nothing; reads the engine's container list (ringfence-made sandboxes only).",
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'sandbox_run',
    description:
      'Runs one command (an argv array, no shell unless you name one) in a sandbox and returns its exit code and output. Output beyond max_output_bytes, or a run beyond timeout_seconds, stops the command: the sandbox container is restarted (its files stay, its other processes stop). Progress is reported while it runs. Touches only that sandbox container.',
    inputSchema: {
      type: 'object',
      properties: {
        name: NAME,
        command: ARGV,
        timeout_seconds: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_SECONDS },
        max_output_bytes: { type: 'integer', minimum: 1, maximum: MAX_OUTPUT_BYTES },
        workdir: { type: 'string', pattern: '^/', maxLength: 4096 },
      },
      required: ['name', 'command'],
      additionalProperties: false,
    },
  },
  ...SAVE_TOOLS,
  {
    name: 'sandbox_delete',
    description:
      'Deletes a sandbox. Touches the container engine: removes its container, its egress sidecar and its networks, only objects labelled ringfence.sandbox=NAME and made by this gateway; nothing else.',
    inputSchema: {
      type: 'object',
      properties: { name: NAME },
      required: ['name'],
      additionalProperties: false,
    },
  },
  ...EXPLORE_TOOLS,
  ...LIFECYCLE_TOOLS,
];

export const OWN_TOOL_NAMES: ReadonlySet<string> = new Set(OWN_TOOLS.map((t) => String(t.name)));
