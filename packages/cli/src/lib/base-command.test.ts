import { Errors } from '@oclif/core';
import { RegistrationError } from '@ringfence/gateway/registration';
import { StoreError } from '@ringfence/gateway/store';
import { afterEach, describe, expect, it } from 'vitest';
import { describeFailure, REPORT_LINE, RingfenceCommand } from './base-command.js';

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
