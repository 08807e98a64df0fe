import { createHash } from 'node:crypto';
import { expectObject, expectOnlyKeys, JsonStore, StoreError } from '../store/json-store.js';
import type { ServerConfig } from './servers.js';

/**
 * The era verdict of each registered server, kept beside `mcp-servers.json` in
 * `upstream-eras.json`: which protocol it speaks, learnt by one `server/discover` probe, so later
 * starts connect without probing. A verdict belongs to one registration: it is keyed by a digest
 * of what reaches the server (URL and headers, or image, command and env), so a registration
 * changed in any of these is probed again. Header and env values are hashed, never stored.
 */
export type EraVerdict =
  | {
      readonly era: 'modern';
      /** The server's DiscoverResult, as it gave it (untrusted: the SDK validates it on use). */
      readonly discover: Record<string, unknown>;
      /**
       * How its 2025 clients are served, learnt at the first one's request: `2025` over a 2025
       * session beside the 2026 connection (the server offers both eras), `2026` on the 2026
       * connection (it refused a 2025 session). Absent: no 2025 client has called it yet.
       */
      readonly legacy_clients?: '2025' | '2026';
      readonly registration: string;
      readonly checked_at: string;
    }
  | { readonly era: 'legacy'; readonly registration: string; readonly checked_at: string };

export interface ErasFile {
  version: 1;
  servers: Record<string, EraVerdict>;
}

/** A discover result larger than this is not kept (the next start probes again). */
export const MAX_DISCOVER_BYTES = 256 * 1024;
/**
 * A 2025 verdict is probed again after this long: a server that moved to 2026 would otherwise be
 * spoken to in 2025 for ever (it still answers `initialize`). A stale 2026 verdict needs no
 * horizon: it fails loudly at connect, and is probed again then.
 */
export const LEGACY_VERDICT_HORIZON_MS = 7 * 24 * 3600 * 1000;

/** How far in the future a verdict's `checked_at` may be before it is not trusted (clock skew). */
const CLOCK_SKEW_MS = 5 * 60_000;

/** What reaches the server, digested: a changed registration is a different server. */
export function registrationDigest(config: ServerConfig): string {
  const identity =
    config.transport === 'http'
      ? { transport: 'http', url: config.url, headers: sorted(config.headers) }
      : {
          transport: 'container',
          image_id: config.image_id,
          command: config.command ?? null,
          env: sorted(config.env),
        };
  return `sha256:${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
}

const sorted = (record: Readonly<Record<string, string>> | undefined) =>
  Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function parseVerdict(value: unknown, what: string): EraVerdict {
  const entry = expectObject(value, what);
  const fail = (why: string) => new StoreError('STORE_SHAPE', `${what}: ${why}`);
  if (typeof entry.registration !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(entry.registration))
    throw fail('registration must be sha256:<64 hex>');
  if (typeof entry.checked_at !== 'string' || Number.isNaN(Date.parse(entry.checked_at)))
    throw fail('checked_at must be a date');
  if (entry.era === 'legacy') {
    expectOnlyKeys(entry, ['era', 'registration', 'checked_at'], what);
    return entry as unknown as EraVerdict;
  }
  if (entry.era !== 'modern') throw fail('era must be "modern" or "legacy"');
  expectOnlyKeys(entry, ['era', 'discover', 'legacy_clients', 'registration', 'checked_at'], what);
  expectObject(entry.discover, `${what}.discover`);
  if (
    entry.legacy_clients !== undefined &&
    entry.legacy_clients !== '2025' &&
    entry.legacy_clients !== '2026'
  )
    throw fail('legacy_clients must be "2025" or "2026"');
  return entry as unknown as EraVerdict;
}

export function parseErasFile(value: unknown): ErasFile {
  const file = expectObject(value, 'upstream-eras.json');
  expectOnlyKeys(file, ['version', 'servers'], 'upstream-eras.json');
  if (file.version !== 1)
    throw new StoreError('STORE_SHAPE', `version ${String(file.version)} is not supported (expected 1)`);
  const servers: Record<string, EraVerdict> = Object.create(null);
  for (const [name, verdict] of Object.entries(expectObject(file.servers, 'servers')))
    servers[name] = parseVerdict(verdict, `servers.${name}`);
  return { version: 1, servers };
}

/** `upstream-eras.json`: the era verdict per registered server (see {@link EraVerdict}). */
export class EraStore {
  private readonly store: JsonStore<ErasFile>;

  constructor(home: string) {
    this.store = new JsonStore(
      home,
      'upstream-eras.json',
      parseErasFile,
      () => ({ version: 1, servers: Object.create(null) }),
      'to start over (each server is then probed again at its next start)',
    );
  }

  get path(): string {
    return this.store.path;
  }

  /** Every verdict kept, by server name (stale or not: for people). */
  async all(): Promise<Readonly<Record<string, EraVerdict>>> {
    return (await this.store.read()).servers;
  }

  /** The verdict for this registration, if it is still good (same registration, within the horizon). */
  async recall(config: ServerConfig, now = Date.now()): Promise<EraVerdict | undefined> {
    const verdict = (await this.store.read()).servers[config.name];
    if (!verdict || verdict.registration !== registrationDigest(config)) return undefined;
    const age = now - Date.parse(verdict.checked_at);
    // A verdict dated in the future (a hand-edited file, or a clock set back) is not trusted: its
    // age would never pass the horizon, so a 2025 verdict would never be probed again.
    if (!(age >= -CLOCK_SKEW_MS)) return undefined;
    if (verdict.era === 'legacy' && age > LEGACY_VERDICT_HORIZON_MS) return undefined;
    return verdict;
  }

  async remember(
    config: ServerConfig,
    verdict: { era: 'legacy' } | { era: 'modern'; discover: Record<string, unknown> },
    now = Date.now(),
  ): Promise<void> {
    if (verdict.era === 'modern' && JSON.stringify(verdict.discover).length > MAX_DISCOVER_BYTES) {
      await this.forget(config.name);
      return;
    }
    const kept: EraVerdict = {
      ...verdict,
      registration: registrationDigest(config),
      checked_at: new Date(now).toISOString(),
    } as EraVerdict;
    await this.store.update((file) => {
      file.servers[config.name] = kept;
    });
  }

  /** How a 2026 server's 2025 clients are served (see `legacy_clients`): kept with its verdict. */
  async noteLegacyClients(config: ServerConfig, how: '2025' | '2026'): Promise<void> {
    const registration = registrationDigest(config);
    await this.store.update((file) => {
      const verdict = file.servers[config.name];
      if (verdict?.era === 'modern' && verdict.registration === registration)
        file.servers[config.name] = { ...verdict, legacy_clients: how };
    });
  }

  async forget(name: string): Promise<void> {
    await this.store.update((file) => {
      delete file.servers[name];
    });
  }
}
