import { SERVER_NAME } from '../config/servers.js';
import { expectObject, expectOnlyKeys, JsonStore, StoreError } from '../store/json-store.js';
import { BACKEND_LABEL, type BackendKind, type ValueBackend } from './backend.js';
import { CREDENTIAL_CLASSES, isCredentialClass } from './classes.js';
import { EncryptedFileBackend } from './encrypted-file.js';
import { CredentialError } from './errors.js';
import type { CredentialClass, KnownCredential, KnownCredentials } from './known.js';
import { SecretServiceBackend } from './secret-service.js';

export const CREDENTIAL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What is known of a credential besides its value (`credentials.json`): never the value. */
export interface CredentialRecord {
  readonly class: CredentialClass;
  readonly bound_to: readonly string[];
  readonly backend: BackendKind;
}

interface CredentialsFile {
  version: 1;
  credentials: Record<string, CredentialRecord>;
}

function parseCredentialsFile(value: unknown): CredentialsFile {
  const file = expectObject(value, 'credentials.json');
  expectOnlyKeys(file, ['version', 'credentials'], 'credentials.json');
  if (file.version !== 1)
    throw new StoreError('STORE_SHAPE', `version ${String(file.version)} is not supported (expected 1)`);
  const credentials: Record<string, CredentialRecord> = Object.create(null);
  for (const [name, raw] of Object.entries(expectObject(file.credentials, 'credentials'))) {
    const what = `credentials.${name}`;
    if (!CREDENTIAL_NAME.test(name)) throw new StoreError('STORE_SHAPE', `${what}: not a valid name`);
    const record = expectObject(raw, what);
    expectOnlyKeys(record, ['class', 'bound_to', 'backend'], what);
    if (typeof record.class !== 'string' || !isCredentialClass(record.class))
      throw new StoreError('STORE_SHAPE', `${what}.class must be one of ${CREDENTIAL_CLASSES.join(', ')}`);
    if (!Array.isArray(record.bound_to) || record.bound_to.some((s) => typeof s !== 'string'))
      throw new StoreError('STORE_SHAPE', `${what}.bound_to must be a list of server names`);
    if (record.backend !== 'secret-service' && record.backend !== 'encrypted-file')
      throw new StoreError('STORE_SHAPE', `${what}.backend must be secret-service or encrypted-file`);
    credentials[name] = record as unknown as CredentialRecord;
  }
  return { version: 1, credentials };
}

/** Which backend new values go to: `RINGFENCE_CREDENTIALS` = auto (default) | keyring | file. */
export type BackendChoice = 'auto' | 'keyring' | 'file';

export function backendChoiceFrom(env: NodeJS.ProcessEnv = process.env): BackendChoice {
  const raw = (env.RINGFENCE_CREDENTIALS ?? 'auto').trim().toLowerCase();
  if (raw === 'auto' || raw === 'keyring' || raw === 'file' || raw === '')
    return (raw || 'auto') as BackendChoice;
  throw new CredentialError(
    'CREDENTIAL_USAGE',
    `RINGFENCE_CREDENTIALS="${raw}" is not one of auto, keyring, file. Unset it (auto: the OS keyring when one answers, else the encrypted file).`,
  );
}

/** Which backend answers now, and why the keyring does not when it does not. */
export interface BackendStatus {
  readonly kind: BackendKind;
  readonly label: string;
  readonly where: string;
  /** Why the OS keyring is not used (absent when it is). */
  readonly keyringUnavailable?: string;
}

export const validateCredentialName = (name: string): void => {
  if (!CREDENTIAL_NAME.test(name))
    throw new CredentialError(
      'CREDENTIAL_USAGE',
      `"${name}" is not a valid credential name: use 1-64 letters, digits, "_", "." and "-", starting with a letter or digit (e.g. github-GITHUB_TOKEN).`,
    );
};

export function validateBindings(servers: readonly string[]): void {
  for (const server of servers)
    if (!SERVER_NAME.test(server))
      throw new CredentialError(
        'CREDENTIAL_USAGE',
        `"${server}" is not a server name ([a-z0-9][a-z0-9-]{0,31}); give the names --bind takes as registered (ringfence mcp ls), comma-separated.`,
      );
}

/**
 * The credential store: names, classes and bindings in `credentials.json` (0600, no values), the
 * values in the OS keyring when a Secret Service answers, else in the encrypted file. Each
 * record says where its value went, so a later read asks that backend and no other.
 */
export class CredentialStore implements KnownCredentials {
  private readonly meta: JsonStore<CredentialsFile>;
  private readonly keyring: SecretServiceBackend;
  private readonly file: EncryptedFileBackend;
  private status: Promise<BackendStatus> | undefined;

  constructor(
    readonly home: string,
    private readonly choice: BackendChoice = backendChoiceFrom(),
  ) {
    this.meta = new JsonStore(
      home,
      'credentials.json',
      parseCredentialsFile,
      () => ({ version: 1, credentials: Object.create(null) }),
      'to start over (every credential then needs ringfence secret set NAME again)',
    );
    this.keyring = new SecretServiceBackend(SecretServiceBackend.serviceFor(home));
    this.file = new EncryptedFileBackend(home);
  }

  get path(): string {
    return this.meta.path;
  }

  private backend(kind: BackendKind): ValueBackend {
    return kind === 'secret-service' ? this.keyring : this.file;
  }

  /** The backend new values go to, probed once per store (`secret ls`, `doctor`). */
  backendStatus(): Promise<BackendStatus> {
    this.status ??= this.probe();
    return this.status;
  }

  private async probe(): Promise<BackendStatus> {
    const file = (why: string): BackendStatus => ({
      kind: 'encrypted-file',
      label: BACKEND_LABEL['encrypted-file'],
      where: this.file.where,
      keyringUnavailable: why,
    });
    if (this.choice === 'file') return file('RINGFENCE_CREDENTIALS=file');
    const why = await this.keyring.probe();
    if (why === undefined)
      return { kind: 'secret-service', label: BACKEND_LABEL['secret-service'], where: this.keyring.where };
    if (this.choice === 'keyring')
      throw new CredentialError(
        'CREDENTIAL_BACKEND',
        `RINGFENCE_CREDENTIALS=keyring, but no Secret Service answers (${why}). Start or unlock your keyring (gnome-keyring, KWallet, KeePassXC), or unset RINGFENCE_CREDENTIALS to use the encrypted file.`,
      );
    return file(`no Secret Service answers: ${why}`);
  }

  async list(): Promise<Readonly<Record<string, CredentialRecord>>> {
    return (await this.meta.read()).credentials;
  }

  async get(name: string): Promise<CredentialRecord> {
    const record = (await this.list())[name];
    if (!record)
      throw new CredentialError(
        'CREDENTIAL_UNKNOWN',
        `No credential named "${name}" is stored. Store it with: ringfence secret set ${name} --class CLASS --bind SERVER (the value is read from the terminal or stdin). See the stored ones with: ringfence secret ls`,
      );
    return record;
  }

  /** Store (or replace) a credential; returns where its value went. */
  async set(input: {
    name: string;
    class: string;
    bindTo: readonly string[];
    value: string;
  }): Promise<BackendStatus> {
    validateCredentialName(input.name);
    if (!isCredentialClass(input.class))
      throw new CredentialError(
        'CREDENTIAL_USAGE',
        `--class "${input.class}" is not one of ${CREDENTIAL_CLASSES.join(', ')} (docs/credentials.md says which hosts each may reach).`,
      );
    validateBindings(input.bindTo);
    if (input.value.length === 0)
      throw new CredentialError(
        'CREDENTIAL_USAGE',
        `The value for "${input.name}" is empty; nothing was stored.`,
      );
    const status = await this.backendStatus();
    const previous = (await this.list())[input.name];
    await this.backend(status.kind).set(input.name, input.value);
    // A value moved to another backend is not left behind in the old one.
    if (previous && previous.backend !== status.kind)
      await this.backend(previous.backend)
        .delete(input.name)
        .catch(() => false);
    await this.meta.update((file) => {
      file.credentials[input.name] = {
        class: input.class,
        bound_to: [...new Set(input.bindTo)],
        backend: status.kind,
      };
    });
    return status;
  }

  /** The value, from the backend that holds it. */
  async value(name: string): Promise<string> {
    const record = await this.get(name);
    const value = await this.backend(record.backend).get(name);
    if (value === undefined)
      throw new CredentialError(
        'CREDENTIAL_BACKEND',
        `Credential "${name}" is listed but ${this.backend(record.backend).where} has no value for it (removed outside ringfence?). Set it again: ringfence secret set ${name} --class ${record.class}${record.bound_to.length > 0 ? ` --bind ${record.bound_to.join(',')}` : ''}`,
      );
    return value;
  }

  async remove(name: string): Promise<void> {
    const record = await this.get(name);
    await this.backend(record.backend).delete(name);
    await this.meta.update((file) => {
      delete file.credentials[name];
    });
  }

  /** Add (or, with `unbind`, take away) servers a credential may go to. */
  async bind(name: string, servers: readonly string[], unbind = false): Promise<CredentialRecord> {
    validateBindings(servers);
    await this.get(name);
    return this.meta.update((file) => {
      const record = file.credentials[name]!;
      const bound = unbind
        ? record.bound_to.filter((s) => !servers.includes(s))
        : [...new Set([...record.bound_to, ...servers])];
      file.credentials[name] = { ...record, bound_to: bound };
      return file.credentials[name]!;
    });
  }

  /**
   * `mcp rm SERVER`: the server is no longer anywhere a credential may go, so a later server
   * registered under the same name does not inherit the bindings. Returns the credentials unbound.
   */
  async unbindServer(server: string): Promise<string[]> {
    return this.meta.update((file) => {
      const unbound: string[] = [];
      for (const [name, record] of Object.entries(file.credentials)) {
        if (!record.bound_to.includes(server)) continue;
        file.credentials[name] = { ...record, bound_to: record.bound_to.filter((s) => s !== server) };
        unbound.push(name);
      }
      return unbound;
    });
  }

  /** Every stored credential with its value, for the argument scanner and the result redactor. */
  async all(): Promise<readonly KnownCredential[]> {
    const out: KnownCredential[] = [];
    for (const [name, record] of Object.entries(await this.list())) {
      const value = await this.backend(record.backend).get(name);
      if (value !== undefined)
        out.push({ id: name, class: record.class, value, boundTo: [...record.bound_to] });
    }
    return out;
  }
}
