import type { AsyncEntry } from '@napi-rs/keyring';
import type { ValueBackend } from './backend.js';
import { CredentialError } from './errors.js';

/** How long the keyring may take to answer a probe: a locked keyring may wait on a prompt for ever. */
const PROBE_MS = 3000;
const PROBE_ACCOUNT = 'ringfence-probe';

/**
 * The freedesktop Secret Service (gnome-keyring, KWallet, KeePassXC) over D-Bus, through
 * `@napi-rs/keyring` (keyring-rs), pinned to the Secret Service store so it never falls back to
 * the kernel's keyutils (which forgets everything at logout). On macOS and Windows the same
 * binding uses the Keychain and the Credential Manager (the pin is Linux-only). Items are filed
 * under the service `ringfence <home>`, so two RINGFENCE_HOMEs never share values.
 */
export class SecretServiceBackend implements ValueBackend {
  readonly kind = 'secret-service' as const;
  readonly where: string;

  constructor(private readonly service: string) {
    this.where = `the OS keyring (Secret Service), service "${service}"`;
  }

  static serviceFor(home: string): string {
    return `ringfence ${home}`;
  }

  /**
   * Loaded on first use only: the native binding costs nothing to commands that hold no
   * credential, and a platform without its prebuilt package (an optional dependency) falls
   * back to the encrypted file instead of failing to load ringfence.
   */
  private static binding: Promise<typeof import('@napi-rs/keyring')> | undefined;

  private async entry(name: string): Promise<AsyncEntry> {
    // `mcp serve` runs a CommonJS bundle through vm.Script (its code cache), where import() has
    // no loader: there `require` is the bundle's own; elsewhere (ES modules) import() works.
    SecretServiceBackend.binding ??=
      typeof require === 'function'
        ? Promise.resolve().then(() => require('@napi-rs/keyring') as typeof import('@napi-rs/keyring'))
        : import('@napi-rs/keyring');
    const { AsyncEntry } = await SecretServiceBackend.binding;
    // The constructor throws when there is no D-Bus session at all.
    return new AsyncEntry(this.service, name, { linux: { store: 'secret-service' } });
  }

  /**
   * Whether a Secret Service answers now: undefined when it does, else why not (for `doctor`
   * and `secret ls`). Reading an entry that does not exist is the cheapest full round trip.
   */
  async probe(): Promise<string | undefined> {
    try {
      await (await this.entry(PROBE_ACCOUNT)).getPassword(AbortSignal.timeout(PROBE_MS));
      return undefined;
    } catch (error) {
      return (error as Error).message.split('\n')[0] ?? 'no answer';
    }
  }

  private failed(what: string, name: string, error: unknown): CredentialError {
    // keyring-rs errors name the platform's failure, never the value.
    return new CredentialError(
      'CREDENTIAL_BACKEND',
      `The OS keyring did not ${what} credential "${name}": ${(error as Error).message.split('\n')[0]}. Unlock the keyring (or start its daemon) and run the command again; ringfence doctor says which backend answers.`,
      { cause: error },
    );
  }

  async get(name: string): Promise<string | undefined> {
    try {
      return (await (await this.entry(name)).getPassword(AbortSignal.timeout(PROBE_MS * 5))) ?? undefined;
    } catch (error) {
      throw this.failed('give back', name, error);
    }
  }

  async set(name: string, value: string): Promise<void> {
    try {
      await (await this.entry(name)).setPassword(value, AbortSignal.timeout(PROBE_MS * 5));
    } catch (error) {
      throw this.failed('store', name, error);
    }
  }

  async delete(name: string): Promise<boolean> {
    try {
      return await (await this.entry(name)).deleteCredential(AbortSignal.timeout(PROBE_MS * 5));
    } catch (error) {
      throw this.failed('delete', name, error);
    }
  }
}
