import { expectObject, JsonStore, StoreError } from '../store/json-store.js';

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

export interface ServerPins {
  tools: Record<string, PinRecord>;
  pending: Record<string, PendingRecord>;
}

export interface PinsFile {
  version: 1;
  servers: Record<string, ServerPins>;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

function parseRecord(value: unknown, what: string, pending: boolean): PinRecord | PendingRecord {
  const record = expectObject(value, what);
  if (typeof record.digest !== 'string' || !DIGEST.test(record.digest))
    throw new StoreError('STORE_SHAPE', `${what}.digest is malformed`);
  expectObject(record.definition, `${what}.definition`);
  if (pending && record.kind !== 'changed' && record.kind !== 'new')
    throw new StoreError('STORE_SHAPE', `${what}.kind must be changed or new`);
  return record as unknown as PinRecord;
}

export function parsePinsFile(value: unknown): PinsFile {
  const file = expectObject(value, 'mcp-pins.json');
  if (file.version !== 1)
    throw new StoreError('STORE_SHAPE', `version ${String(file.version)} is not supported (expected 1)`);
  const servers = expectObject(file.servers, 'servers');
  // A null-prototype map: server and tool names come from outside and must not reach Object.prototype.
  const parsed: Record<string, ServerPins> = Object.create(null);
  for (const [name, entry] of Object.entries(servers)) {
    const pins = expectObject(entry, `servers.${name}`);
    const tools: Record<string, PinRecord> = Object.create(null);
    const pending: Record<string, PendingRecord> = Object.create(null);
    for (const [tool, record] of Object.entries(expectObject(pins.tools ?? {}, `servers.${name}.tools`))) {
      tools[tool] = parseRecord(record, `servers.${name}.tools.${tool}`, false) as PinRecord;
    }
    for (const [tool, record] of Object.entries(
      expectObject(pins.pending ?? {}, `servers.${name}.pending`),
    )) {
      pending[tool] = parseRecord(record, `servers.${name}.pending.${tool}`, true) as PendingRecord;
    }
    parsed[name] = { tools, pending };
  }
  return { version: 1, servers: parsed };
}

export function emptyServerPins(): ServerPins {
  return { tools: Object.create(null), pending: Object.create(null) };
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
