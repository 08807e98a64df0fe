import { type AgentRecord, AgentStore } from '@ringfence/gateway/agents';
import { resolveHome } from '@ringfence/gateway/home';
import { rendered } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';

export default class AgentLs extends RingfenceCommand {
  static override description = 'List agent identities (names, scopes, creation time; never tokens).';
  static override enableJsonFlag = true;

  async run(): Promise<{ agents: Omit<AgentRecord, 'token_sha256'>[] }> {
    await this.parse(AgentLs);
    const agents = await new AgentStore(resolveHome()).list();
    const shown = agents.map(({ name, scope, created_at }) => ({ name, scope, created_at }));
    if (!this.jsonEnabled()) {
      if (shown.length === 0) this.log('No agents. Add one with: ringfence agent add NAME --scope SCOPE');
      for (const a of shown)
        this.log(
          `${rendered(a.name, 'name')}  scope=${rendered(a.scope, 'name')}  created ${rendered(a.created_at, 'name')}`,
        );
    }
    return { agents: shown };
  }
}
