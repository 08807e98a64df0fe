import { isDeepStrictEqual } from 'node:util';
import { describeEntry, type Launch, ringfenceEntry, ringfenceEntryOf } from './entries.js';
import {
  backupClientConfig,
  type ClientEntry,
  type ClientKind,
  readClientConfig,
  writeClientConfig,
} from './formats.js';

export interface SetupOptions {
  readonly kind: ClientKind;
  readonly path: string;
  readonly home: string;
  readonly launch: Launch;
  /** One entry per registered server (`mcp serve --only NAME`) instead of one for all. */
  readonly perServer?: readonly string[];
  readonly dryRun?: boolean;
}

export interface SetupResult {
  readonly path: string;
  /** The file rewritten: `path`, or the file it links to (the link itself is never replaced). */
  readonly target: string;
  readonly changes: readonly { entry: string; before?: string; after?: string }[];
  readonly backup?: string;
}

/**
 * `ringfence client setup`: write the client's entries for ringfence and drop the ones ringfence
 * wrote before for the same home that are no longer wanted (switching between one entry and one
 * per server never leaves the same tools twice). Other entries are left alone, except one with
 * the very name of a new entry, which is replaced (the backup keeps it). Unchanged: no write.
 */
export async function setupClient(options: SetupOptions): Promise<SetupResult> {
  const config = await readClientConfig(options.kind, options.path, { mustExist: false });
  const wanted: Record<string, ClientEntry> = options.perServer
    ? Object.fromEntries(
        options.perServer.map((name) => [
          name,
          ringfenceEntry(options.kind, options.launch, options.home, name),
        ]),
      )
    : { ringfence: ringfenceEntry(options.kind, options.launch, options.home) };
  const servers: Record<string, ClientEntry> = {};
  const changes: { entry: string; before?: string; after?: string }[] = [];
  for (const [entry, value] of Object.entries(config.servers)) {
    const ours = value && typeof value === 'object' ? ringfenceEntryOf(value) : undefined;
    if (entry in wanted) continue;
    if (ours && ours.home === options.home) {
      changes.push({ entry, before: describeEntry(value) });
      continue;
    }
    servers[entry] = value;
  }
  for (const [entry, value] of Object.entries(wanted)) {
    const before = config.servers[entry];
    if (!isDeepStrictEqual(before, value)) {
      changes.push({
        entry,
        ...(before && typeof before === 'object' ? { before: describeEntry(before) } : {}),
        after: describeEntry(value),
      });
    }
    servers[entry] = value;
  }
  if (options.dryRun || changes.length === 0) return { path: config.path, target: config.target, changes };
  const backup = config.exists ? await backupClientConfig(config) : undefined;
  await writeClientConfig(config, servers);
  return { path: config.path, target: config.target, changes, ...(backup ? { backup } : {}) };
}
