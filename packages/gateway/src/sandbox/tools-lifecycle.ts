import {
  DEFAULT_LOG_BYTES,
  DEFAULT_LOG_TAIL,
  EXEC_OUTPUT_BYTES,
  MAX_EXECS_RUNNING,
  MAX_LOG_BYTES,
  MAX_LOG_TAIL,
} from './limits-lifecycle.js';

/**
 * The lifecycle tools (start, stop, logs, exec in the background) and the image tools, served as
 * part of the server `ringfence` (tools.ts spreads them into OWN_TOOLS). Each description says
 * what it touches.
 */
const NAME = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9-]{0,31}$',
  description: 'The sandbox name: 1-32 lower-case letters, digits or "-".',
};

const nameOnly = {
  type: 'object',
  properties: { name: NAME },
  required: ['name'],
  additionalProperties: false,
};

export const LIFECYCLE_TOOLS: readonly Record<string, unknown>[] = [
  {
    name: 'sandbox_stop',
    description:
      'Stops a sandbox: its processes end (background commands too); its files stay. Touches only that sandbox container (a stop in the engine); its egress proxy and networks stay, so sandbox_start brings it back with the same containment.',
    inputSchema: nameOnly,
  },
  {
    name: 'sandbox_start',
    description:
      'Starts a stopped sandbox again, exactly as it was made (same image, limits, network, mounts) with the files it had. Touches only that sandbox container (a start in the engine).',
    inputSchema: nameOnly,
  },
  {
    name: 'sandbox_logs',
    description: `Reads a sandbox's output: its main process's (the last \`tail\` lines of its log, both streams counted together, default ${DEFAULT_LOG_TAIL}, optionally only \`since\` a time), or with \`exec\` a background command's (what the gateway kept of it, and its exit code once it ended). At most max_bytes (default ${DEFAULT_LOG_BYTES}) of each stream, the end kept. Touches nothing; reads the engine's log of that sandbox container or the gateway's memory.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: NAME,
        tail: { type: 'integer', minimum: 1, maximum: MAX_LOG_TAIL },
        since: {
          type: 'string',
          maxLength: 64,
          description: 'A duration back from now ("90s", "10m", "2h", "1d") or an ISO 8601 time.',
        },
        max_bytes: { type: 'integer', minimum: 1, maximum: MAX_LOG_BYTES },
        exec: { type: 'string', pattern: '^x[0-9a-f]{12}$', description: 'An id sandbox_exec returned.' },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
  {
    name: 'sandbox_exec',
    description: `Starts one command (an argv array, no shell unless you name one) in the background in a running sandbox and returns its id at once; read its output and exit code later with sandbox_logs {name, exec: id}. No timeout: it ends when it exits or the sandbox stops or restarts. The gateway keeps the last ${EXEC_OUTPUT_BYTES / 1024} KiB of each of its streams; at most ${MAX_EXECS_RUNNING} run at once per sandbox. Touches only that sandbox container (one exec). For a command you wait for, use sandbox_run.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: NAME,
        command: {
          type: 'array',
          minItems: 1,
          maxItems: 256,
          items: { type: 'string', maxLength: 8192 },
        },
        workdir: { type: 'string', pattern: '^/', maxLength: 4096 },
      },
      required: ['name', 'command'],
      additionalProperties: false,
    },
  },
  {
    name: 'image_list',
    description:
      "Lists the images sandboxes may be made from (those the person allowed with --sandbox-image): whether each is on this host, its size, and whether the organisation policy's allowed_mcp admits it. Touches nothing; reads the engine's image list.",
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'image_pull',
    description:
      "Pulls one image the person allowed with --sandbox-image and the policy's allowed_mcp admits, on the person's side (the engine fetches it; no sandbox needs a network for it). Touches the container engine's images: that one image only.",
    inputSchema: {
      type: 'object',
      properties: { image: { type: 'string', minLength: 1, maxLength: 512 } },
      required: ['image'],
      additionalProperties: false,
    },
  },
];
