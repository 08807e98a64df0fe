import { BACKEND_LABEL, CredentialStore } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import { rendered } from '@ringfence/gateway/text';
import { RingfenceCommand } from '../../lib/base-command.js';

interface Listed {
  readonly name: string;
  readonly class: string;
  readonly bound_to: readonly string[];
  readonly backend: string;
}

export default class SecretLs extends RingfenceCommand {
  static override description =
    'List stored credentials: names, classes, the servers each is bound to and the backend that holds its value (never a value), and which backend new values go to.';
  static override enableJsonFlag = true;

  async run(): Promise<{
    credentials: Listed[];
    backend: { kind: string; where: string; keyring_unavailable?: string };
  }> {
    await this.parse(SecretLs);
    const store = new CredentialStore(resolveHome());
    const status = await store.backendStatus();
    const credentials = Object.entries(await store.list()).map(([name, record]) => ({
      name,
      class: record.class,
      bound_to: [...record.bound_to],
      backend: record.backend,
    }));
    if (!this.jsonEnabled()) {
      if (credentials.length === 0)
        this.log('No credentials. Store one with: ringfence secret set NAME --class CLASS --bind SERVER');
      for (const c of credentials)
        this.log(
          `${rendered(c.name, 'name')}  class=${c.class}  bound to ${c.bound_to.length > 0 ? c.bound_to.join(', ') : 'no server'}  in ${BACKEND_LABEL[c.backend as keyof typeof BACKEND_LABEL]}`,
        );
      this.log(
        `New values go to ${status.where}${status.keyringUnavailable ? ` (the OS keyring is not used: ${status.keyringUnavailable})` : ''}.`,
      );
    }
    return {
      credentials,
      backend: {
        kind: status.kind,
        where: status.where,
        ...(status.keyringUnavailable ? { keyring_unavailable: status.keyringUnavailable } : {}),
      },
    };
  }
}
