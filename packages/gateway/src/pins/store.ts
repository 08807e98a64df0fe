import { expectObject, JsonStore, StoreError } from '../store/json-store.js';
import { DEFINITION_KINDS, type DefinitionKind, KIND_KEYS } from './kinds.js';

export interface PinRecord {
  readonly digest: string;
  readonly definition: Readonly<Record<string, unknown>>;
  readonly pinned_at: string;
}

export interface PendingRecord {
  readonly digest: string;
  readonly definition: Readonly<Record<string, unknown>>;
  readonly seen_at: string;
  /** `changed` (a pin exists with another digest) or `new` (no pin for this name). */
  readonly kind: 'changed' | 'new';
}

/**
 * One server's pins. Tools sit under `tools`/`pending` (the keys of the first version); other
 * kinds under their own keys (`prompts`/`pending_prompts`, `resources`, `templates`…, see `KIND_KEYS`), absent when empty.
 */
export interface ServerPins {
  tools: Record<string, PinRecord>;
  pending: Record<string, PendingRecord>;
  prompts?: Record<string, PinRecord>;
  pending_prompts?: Record<string, PendingRecord>;
  resources?: Record<string, PinRecord>;
  pending_resources?: Record<string, PendingRecord>;
  templates?: Record<string, PinRecord>;
  pending_templates?: Record<string, PendingRecord>;
  /** A server's instructions, under the one name `instructions` (see `INSTRUCTIONS_NAME`). */
  instructions?: Record<string, PinRecord>;
  pending_instructions?: Record<string, PendingRecord>;
}

export interface PinsFile {
  version: 1;
  servers: Record<string, ServerPins>;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const SERVER_KEYS: readonly string[] = DEFINITION_KINDS.flatMap((kind) => Object.values(KIND_KEYS[kind]));

function parseRecord(value: unknown, what: string, pending: boolean): PinRecord | PendingRecord {
  const record = expectObject(value, what);
  if (typeof record.digest !== 'string' || !DIGEST.test(record.digest))
    throw new StoreError('STORE_SHAPE', `${what}.digest is malformed`);
  expectObject(record.definition, `${what}.definition`);
  if (pending && record.kind !== 'changed' && record.kind !== 'new')
    throw new StoreError('STORE_SHAPE', `${what}.kind must be changed or new`);
  return record as unknown as PinRecord;
}

function parseRecords<R>(value: unknown, what: string, pending: boolean): Record<string, R> {
  // A null-prototype map: names come from outside and must not reach Object.prototype.
  const records: Record<string, R> = Object.create(null);
  for (const [name, record] of Object.entries(expectObject(value ?? {}, what)))
    records[name] = parseRecord(record, `${what}.${name}`, pending) as R;
  return records;
}

export function parsePinsFile(value: unknown): PinsFile {
  const file = expectObject(value, 'mcp-pins.json');
  if (file.version !== 1)
    throw new StoreError('STORE_SHAPE', `version ${String(file.version)} is not supported (expected 1)`);
  const servers = expectObject(file.servers, 'servers');
  const parsed: Record<string, ServerPins> = Object.create(null);
  for (const [name, entry] of Object.entries(servers)) {
    const pins = expectObject(entry, `servers.${name}`);
    // A part this version does not know would be dropped at the next write: refuse instead.
    for (const key of Object.keys(pins)) {
      if (!SERVER_KEYS.includes(key))
        throw new StoreError(
          'STORE_SHAPE',
          `servers.${name} has a part "${key}" this version does not know (a newer ringfence may have written it)`,
        );
    }
    const server = emptyServerPins();
    for (const kind of DEFINITION_KINDS) {
      const keys = KIND_KEYS[kind];
      const pinned = parseRecords<PinRecord>(pins[keys.pinned], `servers.${name}.${keys.pinned}`, false);
      const pending = parseRecords<PendingRecord>(
        pins[keys.pending],
        `servers.${name}.${keys.pending}`,
        true,
      );
      setPinned(server, kind, pinned);
      setPending(server, kind, pending);
    }
    parsed[name] = server;
  }
  return { version: 1, servers: parsed };
}

export function emptyServerPins(): ServerPins {
  return { tools: Object.create(null), pending: Object.create(null) };
}

const EMPTY: Readonly<Record<string, never>> = Object.freeze(Object.create(null));

/** The pins of one kind (read only: change them with `setPinned`). */
export function pinnedOf(pins: ServerPins, kind: DefinitionKind): Readonly<Record<string, PinRecord>> {
  return pins[KIND_KEYS[kind].pinned] ?? EMPTY;
}

export function pendingOf(pins: ServerPins, kind: DefinitionKind): Readonly<Record<string, PendingRecord>> {
  return pins[KIND_KEYS[kind].pending] ?? EMPTY;
}

/** Tools keep their keys even when empty (as the first version wrote them); other kinds only when used. */
export function setPinned(pins: ServerPins, kind: DefinitionKind, records: Record<string, PinRecord>): void {
  const key = KIND_KEYS[kind].pinned;
  if (kind === 'tool' || Object.keys(records).length > 0) pins[key] = records;
  else delete pins[key];
}

export function setPending(
  pins: ServerPins,
  kind: DefinitionKind,
  records: Record<string, PendingRecord>,
): void {
  const key = KIND_KEYS[kind].pending;
  if (kind === 'tool' || Object.keys(records).length > 0) pins[key] = records;
  else delete pins[key];
}

/** `mcp-pins.json`. Pins move only through `approve`, `reset` or first sight of a server. */
export class PinStore {
  private readonly store: JsonStore<PinsFile>;

  constructor(home: string) {
    this.store = new JsonStore(
      home,
      'mcp-pins.json',
      parsePinsFile,
      () => ({ version: 1, servers: Object.create(null) }),
      "— but then every server's next start trusts whatever it lists (trust on first use again), so review with ringfence mcp pins show before serving",
    );
  }

  get path(): string {
    return this.store.path;
  }

  async read(): Promise<PinsFile> {
    return this.store.read();
  }

  async server(name: string): Promise<ServerPins | undefined> {
    return (await this.store.read()).servers[name];
  }

  update<R>(change: (file: PinsFile) => R | Promise<R>): Promise<R> {
    return this.store.update(change);
  }
}
