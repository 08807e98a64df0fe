import { Errors } from '@oclif/core';
import { RegistrationError } from '@ringfence/gateway/registration';
import { StoreError } from '@ringfence/gateway/store';
import { afterEach, describe, expect, it } from 'vitest';
import { describeFailure, REPORT_LINE, RingfenceCommand } from './base-command.js';
import { reportLine } from './serving.js';

const root = new URL('../..', import.meta.url).pathname;

/** A command whose run throws `thrown`. */
function failing(thrown: unknown, json = false) {
  return class Failing extends RingfenceCommand {
    static override enableJsonFlag = json;
    async run(): Promise<void> {
      await this.parse(Failing);
      throw thrown;
    }
  };
}

async function outcome(thrown: unknown): Promise<{ message: string; exit?: number; code?: string }> {
  try {
    await failing(thrown).run([], root);
  } catch (error) {
    const e = error as Errors.CLIError;
    return { message: e.message, exit: e.oclif?.exit, code: e.code };
  }
  throw new Error('the command did not fail');
}

afterEach(() => {
  process.exitCode = undefined;
});

describe('describeFailure', () => {
  it('gives a coded error its own message and code: exit 1 for a refusal, 2 for a usage error', () => {
    const refusal = new StoreError('STORE_CORRUPT', 'x is damaged. Move it aside.');
    expect(describeFailure(refusal)).toEqual({
      message: 'x is damaged. Move it aside.',
      exit: 1,
      code: 'STORE_CORRUPT',
    });
    const usage = new RegistrationError('REGISTRATION_USAGE', 'Give exactly one of --image, --npm or --url.');
    expect(describeFailure(usage)).toMatchObject({ exit: 2, code: 'REGISTRATION_USAGE' });
  });

  it('passes a system error through as it is: it names the path and the reason', () => {
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), {
      code: 'ENOENT',
      syscall: 'open',
    });
    expect(describeFailure(enoent)).toEqual({
      message: "ENOENT: no such file or directory, open '/x'",
      exit: 1,
    });
  });

  it('adds how to report anything it did not foresee', () => {
    expect(describeFailure(new TypeError('x is not a function'))).toEqual({
      message: `x is not a function\n${REPORT_LINE}`,
      exit: 1,
    });
    expect(describeFailure('thrown text').message).toBe(`thrown text\n${REPORT_LINE}`);
  });
});

describe('RingfenceCommand', () => {
  it('turns what run threw into the message, the code and the exit code oclif prints', async () => {
    expect(await outcome(new StoreError('STORE_INSECURE', 'chmod 600 it'))).toEqual({
      message: 'chmod 600 it',
      exit: 1,
      code: 'STORE_INSECURE',
    });
    expect(await outcome(new RegistrationError('REGISTRATION_USAGE', 'one source'))).toMatchObject({
      exit: 2,
    });
    expect(await outcome(new RangeError('bad'))).toEqual({
      message: `bad\n${REPORT_LINE}`,
      exit: 1,
      code: undefined,
    });
  });

  it("leaves oclif's own errors (this.error, parse errors) as they are", async () => {
    expect(await outcome(new Errors.CLIError('kept', { exit: 2 }))).toEqual({
      message: 'kept',
      exit: 2,
      code: undefined,
    });
    await expect(failing(new Error('unused')).run(['--no-such-flag'], root)).rejects.toMatchObject({
      oclif: { exit: 2 },
    });
  });

  it('with --json, prints the error as JSON instead of throwing, and exits with its code', async () => {
    const write = process.stdout.write;
    let printed = '';
    process.stdout.write = ((chunk: string) => {
      printed += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      await failing(new RegistrationError('REGISTRATION_USAGE', 'one source'), true).run(['--json'], root);
    } finally {
      process.stdout.write = write;
    }
    expect(JSON.parse(printed)).toEqual({
      error: { code: 'REGISTRATION_USAGE', message: 'one source', exit: 2 },
    });
    expect(process.exitCode).toBe(2);
  });
});

/** What a command writes to stdout and stderr while `run` runs. */
async function captured(run: () => Promise<unknown>): Promise<{ stdout: string; stderr: string }> {
  const out = process.stdout.write;
  const err = process.stderr.write;
  let stdout = '';
  let stderr = '';
  process.stdout.write = ((chunk: string) => {
    stdout += chunk;
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => {
    stderr += chunk;
    return true;
  }) as typeof process.stderr.write;
  try {
    await run().catch(() => {});
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  return { stdout, stderr };
}

const HOSTILE = 'name\u001b[2K\r\u001b]52;c;ZXZpbA==\u0007\u202e\u{e0041}\u200b\u0085';
const RAW = /[\u001b\r\u0007\u202e\u200b\u0085\u{e0000}-\u{e007f}]/u;

describe('what a command prints cannot carry raw escapes or invisible characters', () => {
  it('log and logToStderr show them escaped, keep newlines, and leave rendered text as it is', async () => {
    class Printing extends RingfenceCommand {
      async run(): Promise<void> {
        await this.parse(Printing);
        this.log(`a\n${HOSTILE}`);
        this.log('already \\u{1B} rendered and C:\\path');
        this.logToStderr(HOSTILE);
      }
    }
    const { stdout, stderr } = await captured(() => Printing.run([], root));
    expect(stdout).toBe(
      'a\nname\\u{1B}[2K\\u{D}\\u{1B}]52;c;ZXZpbA==\\u{7}\\u{202E}\\u{E0041}\\u{200B}\\u{85}\nalready \\u{1B} rendered and C:\\path\n',
    );
    expect(stderr).not.toMatch(RAW);
    expect(stderr).toContain('\\u{E0041}');
  });

  it('--json writes the same values with those characters as \\u escapes', async () => {
    class Listing extends RingfenceCommand {
      static override enableJsonFlag = true;
      async run(): Promise<{ tool: string }> {
        await this.parse(Listing);
        return { tool: HOSTILE };
      }
    }
    const { stdout } = await captured(() => Listing.run(['--json'], root));
    expect(stdout).not.toMatch(RAW);
    expect(stdout).toContain('\\udb40\\udc41');
    expect(JSON.parse(stdout)).toEqual({ tool: HOSTILE });
  });

  it('a failure message quoting server text is shown escaped', async () => {
    expect((await outcome(new StoreError('STORE_CORRUPT', `bad ${HOSTILE}`))).message).not.toMatch(RAW);
  });

  it("mcp serve's report lines: one line each, whatever the server put in them", async () => {
    const { stderr } = await captured(async () =>
      reportLine(`ringfence: withheld s/${HOSTILE}\nringfence: fake line`),
    );
    expect(stderr).toBe(
      'ringfence: withheld s/name\\u{1B}[2K\\u{D}\\u{1B}]52;c;ZXZpbA==\\u{7}\\u{202E}\\u{E0041}\\u{200B}\\u{85}\\u{A}ringfence: fake line\n',
    );
  });

  it("mcp serve's report lines: what the gateway rendered is printed as it is, never rendered twice", async () => {
    // The gateway renders a server's words where it builds the line: a real ESC as \u{1B}, the
    // six characters \u{1B} a server typed as \\u{1B}. Rendering the line again would print both
    // as \\u{1B} (or \\\\u{1B}), which the reading rule calls literal text.
    const { stderr } = await captured(async () => {
      reportLine('ringfence: x failed: a\\u{1B}[2K and b\\\\u{1B}[2K');
      reportLine('ringfence: withheld s/two\\u{20}words: reason');
    });
    expect(stderr).toBe(
      'ringfence: x failed: a\\u{1B}[2K and b\\\\u{1B}[2K\nringfence: withheld s/two\\u{20}words: reason\n',
    );
  });
});
