import { Args, Flags } from '@oclif/core';
import { sandboxLogs } from '@ringfence/gateway/sandbox';
import { rendered, renderUntrusted } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';
import { connectEngine } from '../../lib/engine.js';

export default class SandboxLogs extends RingfenceCommand {
  static override description =
    "Show an assistant's sandbox's main process output (the last --tail lines of its log, stdout and stderr apart, as the engine keeps them: at most 2 MiB). Anything a terminal would obey or hide is shown as \\u{…}. Background commands (sandbox_exec) are kept by their gateway only: the assistant reads them with sandbox_logs.";
  static override enableJsonFlag = true;
  static override args = { name: Args.string({ required: true, description: 'sandbox name' }) };
  static override flags = {
    session: Flags.string({ description: 'the session whose sandbox it is (see ringfence sandbox ls)' }),
    tail: Flags.integer({
      description: 'lines from the end of the log (stdout and stderr together)',
      default: 200,
      min: 1,
      max: 100_000,
    }),
  };

  async run(): Promise<{ name: string; session: string; state: string; stdout: string; stderr: string }> {
    const { args, flags } = await this.parse(SandboxLogs);
    const found = await sandboxLogs(await connectEngine(), args.name, {
      tail: flags.tail,
      ...(flags.session !== undefined ? { session: flags.session } : {}),
    });
    // The sandbox's output is the assistant's: rendered before a person reads it.
    const stdout = renderUntrusted(found.stdout.toString('utf8')).text;
    const stderr = renderUntrusted(found.stderr.toString('utf8')).text;
    if (!this.jsonEnabled()) {
      this.log(
        `sandbox ${rendered(found.sandbox.name, 'name')}  session=${rendered(found.sandbox.session, 'name')}  ${rendered(found.sandbox.state, 'name')}`,
      );
      this.log(stdout.length > 0 ? `--- stdout\n${stdout.replace(/\n$/, '')}` : '--- stdout (empty)');
      this.log(stderr.length > 0 ? `--- stderr\n${stderr.replace(/\n$/, '')}` : '--- stderr (empty)');
    }
    return {
      name: found.sandbox.name,
      session: found.sandbox.session,
      state: found.sandbox.state,
      stdout,
      stderr,
    };
  }
}
