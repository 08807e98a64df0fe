import { BACKEND_LABEL } from '../credentials/backend.js';
import { backendChoiceFrom, CredentialStore } from '../credentials/store.js';
import { resolveHome } from '../home/home.js';

/** The doctor's check for the credential store (a `DoctorCheck`; declared here, as doctor.ts imports this file). */
export interface CredentialsCheck {
  readonly id: 'credentials';
  readonly title: string;
  readonly status: 'ok' | 'warn';
  readonly required: false;
  readonly summary: string;
  readonly fix?: string;
}

/**
 * Which backend holds the stored credentials' values and which one new values go to: the OS
 * keyring when a Secret Service answers, else the encrypted file. A warning when values were put
 * in the keyring and it does not answer now (servers using them cannot start). Never required.
 */
export async function checkCredentials(env: { readonly env: NodeJS.ProcessEnv }): Promise<CredentialsCheck> {
  const base = { id: 'credentials', title: 'Credential store', required: false } as const;
  try {
    const store = new CredentialStore(resolveHome(env.env), backendChoiceFrom(env.env));
    const records = Object.values(await store.list());
    const status = await store.backendStatus().catch((error: Error) => error);
    const counts = (['secret-service', 'encrypted-file'] as const)
      .map((kind) => [kind, records.filter((r) => r.backend === kind).length] as const)
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${n} in the ${BACKEND_LABEL[kind]}`);
    const held =
      records.length === 0
        ? 'no credentials stored'
        : `${records.length} credential(s): ${counts.join(', ')}`;
    if (status instanceof Error) return { ...base, status: 'warn', summary: `${held}; ${status.message}` };
    const next = `new values go to ${status.where}${status.keyringUnavailable ? ` (the OS keyring is not used: ${status.keyringUnavailable})` : ''}`;
    if (status.kind !== 'secret-service' && records.some((r) => r.backend === 'secret-service'))
      return {
        ...base,
        status: 'warn',
        summary: `${held}; the OS keyring does not answer now, so servers using those cannot start; ${next}`,
        fix: 'Start or unlock your keyring (gnome-keyring, KWallet, KeePassXC) in this session, then run ringfence doctor again.',
      };
    return { ...base, status: 'ok', summary: `${held}; ${next}` };
  } catch (error) {
    return {
      ...base,
      status: 'warn',
      summary: `cannot read the credential store: ${(error as Error).message}`,
    };
  }
}
