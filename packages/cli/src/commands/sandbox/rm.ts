import { Args, Flags } from '@oclif/core';
import { removeSandbox } from '@ringfence/gateway/sandbox';
import { rendered } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';
import { connectEngine } from '../../lib/engine.js';

export default class SandboxRm extends RingfenceCommand {
  static override description =
    "Remove an assistant's sandbox, persistent or not: its container, egress sidecar, networks and checkpoint images (only objects labelled ringfence.sandbox=NAME). A name used in two sessions needs --session.";
  static override enableJsonFlag = true;
  static override args = { name: Args.string({ required: true, description: 'sandbox name' }) };
  static override flags = {
    session: Flags.string({ description: 'the session whose sandbox it is (see ringfence sandbox ls)' }),
  };

  async run(): Promise<{ containers: string[]; networks: string[]; images: string[] }> {
    const { args, flags } = await this.parse(SandboxRm);
    const removed = await removeSandbox(await connectEngine(), args.name, flags.session);
    this.log(
      `Removed sandbox ${rendered(args.name, 'name')}: ${removed.containers.length} container(s), ${removed.networks.length} network(s), ${removed.images.length} checkpoint(s).`,
    );
    return removed;
  }
}
