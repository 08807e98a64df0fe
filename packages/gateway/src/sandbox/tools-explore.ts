import { EXPLORE_LIMITS } from './explore-limits.js';

/**
 * The copy-and-explore tools of ringfence's own server (docs/sandboxes.md): fork a sandbox,
 * see its files, read one, write one. Each description says what it touches.
 */

const NAME = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9-]{0,31}$',
  description: 'The sandbox name: 1-32 lower-case letters, digits or "-".',
};

const PATH = {
  type: 'string',
  pattern: '^/',
  maxLength: EXPLORE_LIMITS.pathLength,
};

export const EXPLORE_TOOLS: readonly Record<string, unknown>[] = [
  {
    name: 'sandbox_fork',
    description:
      'Makes a new sandbox from another\'s current files, with the same containment: the same network (none, the same named hosts through its own egress proxy, or "any" where the policy still allows it), the same mounts (checked again against --allow-mount; mounted directories are shared, not copied), the same command. Touches the container engine: commits the source container to an image (pausing it meanwhile) labelled ringfence.role=fork-image and ringfence.sandbox=NEW_NAME, then creates the new sandbox\'s container (and sidecar and networks, with hosts). The image goes when the fork is deleted or this gateway ends.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { ...NAME, description: 'The sandbox to fork.' },
        new_name: { ...NAME, description: 'The new sandbox: 1-32 lower-case letters, digits or "-".' },
      },
      required: ['name', 'new_name'],
      additionalProperties: false,
    },
  },
  {
    name: 'sandbox_explore',
    description: `Lists the files under a path in a sandbox (running or stopped): each entry's path, type, size, permission bits and, for a link, its target (never followed). At most \`depth\` levels (default ${EXPLORE_LIMITS.depth.default}) and \`max_entries\` entries (default ${EXPLORE_LIMITS.entries.default}); says when it stopped short. Names are shown by ringfence's untrusted-text rule (invisible and control characters as \\u{HEX}). Runs nothing in the sandbox. Touches only that sandbox container: reads its file system through the engine's archive API.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: NAME,
        path: { ...PATH, description: 'An absolute path in the sandbox; default "/".' },
        depth: { type: 'integer', minimum: 1, maximum: EXPLORE_LIMITS.depth.max },
        max_entries: { type: 'integer', minimum: 1, maximum: EXPLORE_LIMITS.entries.max },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
  {
    name: 'sandbox_read_file',
    description: `Returns a file's bytes from a sandbox (running or stopped): from \`offset\`, at most \`max_bytes\` (default ${EXPLORE_LIMITS.readBytes.default}, at most ${EXPLORE_LIMITS.readBytes.max}), as UTF-8 text when they are valid UTF-8 and base64 otherwise (\`encoding\` says which), with \`more\` when the file goes on. A link is reported with its target and not followed; a directory is reported, not read. Runs nothing in the sandbox. Touches only that sandbox container: reads its file system through the engine's archive API.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: NAME,
        path: { ...PATH, description: 'An absolute path in the sandbox, without "..".' },
        offset: { type: 'integer', minimum: 0 },
        max_bytes: { type: 'integer', minimum: 1, maximum: EXPLORE_LIMITS.readBytes.max },
      },
      required: ['name', 'path'],
      additionalProperties: false,
    },
  },
  {
    name: 'sandbox_write_file',
    description: `Writes one file into a sandbox (running or stopped), replacing a file already there, owned by the user the sandbox runs as; its directory must exist. At most ${EXPLORE_LIMITS.writeBytes} bytes (10 MiB). Refuses a path that is not absolute or has "..", and a path in a read-only mount. Runs nothing in the sandbox. Touches only that sandbox container: writes through the engine's archive API.`,
    inputSchema: {
      type: 'object',
      properties: {
        name: NAME,
        path: { ...PATH, description: 'The file: an absolute path in the sandbox, without "..".' },
        content: { type: 'string', description: 'The bytes: text, or base64 with encoding "base64".' },
        encoding: { type: 'string', enum: ['utf8', 'base64'], description: 'Default "utf8".' },
        mode: {
          type: 'integer',
          minimum: 0,
          maximum: 0o777,
          description: 'Permission bits as a number (420 is 0644, the default; 493 is 0755).',
        },
      },
      required: ['name', 'path', 'content'],
      additionalProperties: false,
    },
  },
];
