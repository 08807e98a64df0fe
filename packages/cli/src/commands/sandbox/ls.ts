import { listAllSandboxes, type PersonSandbox } from '@ringfence/gateway/sandbox';
import { rendered } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';
import { connectEngine } from '../../lib/engine.js';

export default class SandboxLs extends RingfenceCommand {
  static override description =
    "List the sandboxes assistants made through `mcp serve --sandbox-tools` (containers labelled ringfence.sandbox), of every session. The person's other containers are never listed.";
  static override enableJsonFlag = true;

  async run(): Promise<{ sandboxes: PersonSandbox[] }> {
    await this.parse(SandboxLs);
    const sandboxes = await listAllSandboxes(await connectEngine());
    if (!this.jsonEnabled()) {
      if (sandboxes.length === 0)
        this.log('No sandboxes. An assistant makes one with sandbox_create (mcp serve --sandbox-tools).');
      for (const s of sandboxes)
        this.log(
          `${rendered(s.name, 'name')}  session=${rendered(s.session, 'name')}  ${rendered(s.state, 'name')}  network=${rendered(s.network, 'name')}  image=${rendered(s.image, 'name')}${s.persistent ? '  persistent' : ''}`,
        );
    }
    return { sandboxes };
  }
}
