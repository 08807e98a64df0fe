import { guessClass } from '../credentials/classes.js';
import { SECRET_PREFIX } from '../credentials/references.js';
import type { CredentialStore } from '../credentials/store.js';
import type { RegistrationInput } from '../registration/plan.js';
import { hasTokenShape, isCredentialName, looksLikeSecretWord } from '../text/secret-shapes.js';

/** The part of `mcp add`'s flags that carries values. */
type WithValues = Pick<RegistrationInput, 'env' | 'headers'>;

export interface MovedSecrets<I extends WithValues = WithValues> {
  /** The registration with each env/header value replaced by `@secret:NAME`. */
  readonly input: I;
  /** For the import's row: what was moved where (names and classes, never values). */
  readonly notes: readonly string[];
  /** The credentials stored, in case the registration is refused. */
  readonly stored: readonly string[];
}

/**
 * Whether an imported value is a credential: its name says so (`API_TOKEN`, `Authorization`,
 * `X-Api-Key`…), or it has a known token format, or it looks like a long random word (the same
 * tests the redactor of what people see uses). Anything else (`MEMORY_FILE_PATH`, `LOG_LEVEL`) is
 * configuration and stays as it was: a server with no network may take a file path, not a key.
 */
export const isSecretValue = (key: string, value: string): boolean =>
  isCredentialName(key) || hasTokenShape(value) || looksLikeSecretWord(value.trim());

/** `SERVER-KEY`, within the store's name rules (a header's odd characters become `_`). */
export const importedCredentialName = (server: string, key: string): string =>
  `${server}-${key.replace(/[^A-Za-z0-9_.-]/g, '_')}`.slice(0, 64);

/**
 * `client import`: each env value (contained servers) and header value (remote ones) of an
 * imported entry that is a credential ({@link isSecretValue}) goes into the credential store as `SERVER-KEY`, class guessed from its format
 * (else `generic`), bound to that server; the registration refers to it as `@secret:SERVER-KEY`.
 * So mcp-servers.json never holds the value. Values already written `@secret:…` stay as they are.
 */
export async function moveSecretsToStore<I extends WithValues>(
  server: string,
  input: I,
  store: CredentialStore,
): Promise<MovedSecrets<I>> {
  const notes: string[] = [];
  const stored: string[] = [];
  const move = async (pairs: readonly string[] | undefined, what: string) => {
    if (!pairs) return undefined;
    const out: string[] = [];
    for (const pair of pairs) {
      const at = pair.indexOf('=');
      const key = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (at <= 0 || value.startsWith(SECRET_PREFIX) || value === '' || !isSecretValue(key, value)) {
        out.push(pair);
        continue;
      }
      const name = importedCredentialName(server, key);
      const cls = guessClass(value);
      const status = await store.set({ name, class: cls, bindTo: [server], value });
      stored.push(name);
      notes.push(
        `${what} ${key} moved to the credential store (class ${cls}, bound to ${server}, in ${status.label}) as ${name}`,
      );
      out.push(`${key}=${SECRET_PREFIX}${name}`);
    }
    return out;
  };
  const env = await move(input.env, 'env');
  const headers = await move(input.headers, 'header');
  return {
    input: { ...input, ...(env ? { env } : {}), ...(headers ? { headers } : {}) },
    notes,
    stored,
  };
}
