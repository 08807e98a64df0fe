import { redactText } from '@ringfence/gateway/text';
import { isRingfenceError } from '@ringfence/policy';

// Apart from oclif (base-command.ts) so that `mcp serve`'s bundled fast path (serve-main.ts)
// words a failure exactly as the command does, without loading @oclif/core.

/**
 * Codes that mean the command line itself was wrong. They exit 2, as oclif's own parse errors do,
 * so a script can tell "you called it wrongly" from "it refused" (1).
 */
const USAGE_CODES: ReadonlySet<string> = new Set(['REGISTRATION_USAGE', 'EXPORT_TARGET']);

export const REPORT_LINE =
  'ringfence did not expect this failure, so it may be a bug: please report it to the ringfence maintainers with the command you ran and this message (run it again with DEBUG=* to see where it happened).';

/** What a person is told when a command fails, and the exit code scripts see. */
export interface Failure {
  readonly message: string;
  readonly exit: 1 | 2;
  /** Printed below the message (`Code: …`) for coded errors. */
  readonly code?: string;
}

/** A failure of the machine or the file system (EACCES, ENOENT…): its message names both. */
function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

/**
 * Coded errors already say what happened and what to do next: their message is the whole story.
 * Every message passes the one redactor (gateway text/redact.ts) first.
 * A system error names the path and the operating system's reason. Anything else was not
 * foreseen, so the person is also told how to report it.
 */
export function describeFailure(error: unknown): Failure {
  // A message may quote what failed (a URL with its token, an argument): never shown raw.
  if (isRingfenceError(error))
    return {
      message: redactText(error.message),
      exit: USAGE_CODES.has(error.code) ? 2 : 1,
      code: error.code,
    };
  if (isSystemError(error)) return { message: redactText(error.message), exit: 1 };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `${redactText(message)}\n${REPORT_LINE}`, exit: 1 };
}
