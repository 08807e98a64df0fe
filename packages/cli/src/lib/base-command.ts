import { format } from 'node:util';
import { Command, Errors, ux } from '@oclif/core';
import { renderUntrusted, stringifyForTerminal } from '@ringfence/gateway/text';
import { isRingfenceError } from '@ringfence/policy';

/**
 * Codes that mean the command line itself was wrong. They exit 2, as oclif's own parse errors do,
 * so a script can tell "you called it wrongly" from "it refused" (1).
 */
const USAGE_CODES: ReadonlySet<string> = new Set(['REGISTRATION_USAGE']);

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
 * A system error names the path and the operating system's reason. Anything else was not
 * foreseen, so the person is also told how to report it.
 */
export function describeFailure(error: unknown): Failure {
  if (isRingfenceError(error))
    return { message: error.message, exit: USAGE_CODES.has(error.code) ? 2 : 1, code: error.code };
  if (isSystemError(error)) return { message: error.message, exit: 1 };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `${message}\n${REPORT_LINE}`, exit: 1 };
}

/** oclif's own errors (parse errors, `this.error`, `this.exit`) already carry their exit code. */
const isOclifError = (error: unknown): boolean =>
  error instanceof Errors.CLIError || (typeof error === 'object' && error !== null && 'oclif' in error);

/**
 * The last guard before a terminal. Commands render what a server chose field by field
 * (`renderUntrusted`), which leaves nothing this would change; whatever a command missed (a
 * message quoting a file, a name in an error) still reaches the terminal with every control,
 * format or invisible character shown as \u{…}. Newlines and tabs stay: a command's own
 * multi-line blocks are kept.
 */
export function terminalText(text: string): string {
  return renderUntrusted(text, { keepBackslashes: true }).text;
}

/**
 * Every ringfence command: `run` throws, and this one `catch` turns what it threw into the
 * message and the exit code, never a stack trace. Commands keep no try/catch of their own.
 * Everything it prints passes `terminalText`, and `--json` output is written with
 * `stringifyForTerminal`, so neither can carry a raw escape sequence or invisible character.
 */
export abstract class RingfenceCommand extends Command {
  override log(message = '', ...args: unknown[]): void {
    super.log(terminalText(args.length > 0 ? format(message, ...args) : String(message)));
  }

  override logToStderr(message = '', ...args: unknown[]): void {
    super.logToStderr(terminalText(args.length > 0 ? format(message, ...args) : String(message)));
  }

  /** The same value as oclif's, with what a terminal would hide or obey written as `\uXXXX`. */
  override logJson(json: unknown): void {
    ux.stdout(
      ux.colorizeJson(stringifyForTerminal(json, 2), { pretty: false, theme: this.config.theme?.json }),
    );
  }

  protected override async catch(error: Error & { exitCode?: number }): Promise<unknown> {
    if (isOclifError(error)) return super.catch(error);
    const failure = describeFailure(error);
    this.debug('%O', error);
    process.exitCode ??= failure.exit;
    return super.catch(this.failureError(failure));
  }

  /** `--json`: the message is what says what to do next, so it is part of the object too. */
  protected override toErrorJson(error: unknown): unknown {
    const e = error as { message?: unknown; code?: unknown; oclif?: { exit?: unknown } };
    return {
      error: {
        ...(typeof e.code === 'string' ? { code: e.code } : {}),
        message: String(e.message ?? error),
        ...(typeof e.oclif?.exit === 'number' ? { exit: e.oclif.exit } : {}),
      },
    };
  }

  /** The error oclif prints and exits with; `mcp serve` reports on its own stderr lines instead. */
  protected failureError(failure: Failure): Error {
    return new Errors.CLIError(terminalText(failure.message), {
      exit: failure.exit,
      ...(failure.code ? { code: failure.code } : {}),
    });
  }
}
