/** The caps of the copy-and-explore tools (kept apart: the tool schemas and the argument checks both read them). */
export const EXPLORE_LIMITS = {
  depth: { default: 3, max: 32 },
  entries: { default: 500, max: 5000 },
  readBytes: { default: 64 * 1024, max: 1024 * 1024 },
  /** Decoded bytes of one written file. */
  writeBytes: 10 * 1024 * 1024,
  pathLength: 4096,
  /** Linux's NAME_MAX: a longer file name cannot exist. */
  nameBytes: 255,
} as const;
