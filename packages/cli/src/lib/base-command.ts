import { format } from 'node:util';
import { Command, Errors, ux } from '@oclif/core';
import { redactText, renderUntrusted, stringifyForTerminal } from '@ringfence/gateway/text';
import { describeFailure, type Failure } from './failure.js';

export { describeFailure, type Failure, REPORT_LINE } from './failure.js';

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
    // oclif's parse errors quote the command line (`Nonexistent flag: --token=…`): redacted too.
    if (isOclifError(error)) {
      error.message = redactText(error.message);
      return super.catch(error);
    }
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
