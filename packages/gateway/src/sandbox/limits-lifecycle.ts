/**
 * The bounds of the lifecycle tools, apart from their code so the tool definitions
 * (tools-lifecycle.ts) can state them without importing what uses them.
 */
export const MAX_LOG_TAIL = 10_000;
export const DEFAULT_LOG_TAIL = 200;
export const MAX_LOG_BYTES = 256 * 1024;
export const DEFAULT_LOG_BYTES = 64 * 1024;
/** What the gateway keeps of each stream of a background command: its last bytes. */
export const EXEC_OUTPUT_BYTES = 64 * 1024;
/** Background commands running at once in one sandbox. */
export const MAX_EXECS_RUNNING = 4;
/** Background commands remembered per sandbox (running or ended); the oldest ended one goes first. */
export const MAX_EXECS_KEPT = 16;
