import type { ServerConfig } from '../config/servers.js';
import type { RegistrationInput } from '../registration/plan.js';
import { redactText } from '../text/redact.js';
import { describeEntry, type Launch, ringfenceEntry } from './entries.js';
import {
  backupClientConfig,
  type ClientEntry,
  type ClientKind,
  readClientConfig,
  writeClientConfig,
} from './formats.js';
import { serverNameFor, translateEntry } from './translate.js';

export interface ImportRow {
  /** The entry's name in the client's config. */
  readonly entry: string;
  /** What it was, as a person may see it (no secret values). */
  readonly was: string;
  readonly outcome: 'imported' | 'would import' | 'skipped' | 'already through ringfence';
  /** The registered server's name, when imported. */
  readonly server?: string;
  readonly reason?: string;
  readonly notes: readonly string[];
  /** An OAuth registration: the command that logs in for it (due before its first call). */
  readonly login?: string;
}

export interface ImportResult {
  readonly path: string;
  /** The file rewritten: `path`, or the file it links to (the link itself is never replaced). */
  readonly target: string;
  readonly rows: readonly ImportRow[];
  /** Entries that change in the client's config: name, before and after, as a person may see them. */
  readonly changes: readonly { entry: string; before: string; after: string }[];
  /** Where the file was copied before it was rewritten (absent when nothing was written). */
  readonly backup?: string;
}

export interface ImportOptions {
  readonly kind: ClientKind;
  readonly path: string;
  readonly home: string;
  readonly launch: Launch;
  readonly dryRun: boolean;
  /** Names already registered (they are never reused for another server). */
  readonly registered: readonly string[];
  /** `mcp add` with these flags; throws with the reason when it refuses. */
  readonly register: (input: RegistrationInput) => Promise<ServerConfig>;
  /**
   * Moves the entry's env and header values into the credential store (`import-store.ts`)
   * before it is registered; absent (tests of the rest): the values are registered as they are.
   */
  readonly storeSecrets?: <I extends Pick<RegistrationInput, 'env' | 'headers'>>(
    server: string,
    input: I,
  ) => Promise<{ input: I; notes: readonly string[]; stored: readonly string[] }>;
  /** Told as each entry is registered (an npm fetch or image build can take a while). */
  readonly progress?: (line: string) => void;
  /** Shown what happened and what will change, before the file is touched. */
  readonly beforeWrite?: (result: ImportResult) => void;
}

/**
 * `ringfence client import`: register each entry of a client's config that ringfence can
 * contain, then point those entries at `ringfence mcp serve --only NAME` so the client keeps the
 * same servers under the same names. Entries it cannot import stay as they were. The file is
 * copied beside itself before it is rewritten; a second run finds only ringfence's entries and
 * changes nothing.
 */
export async function importClient(options: ImportOptions): Promise<ImportResult> {
  const config = await readClientConfig(options.kind, options.path, { mustExist: true });
  const taken = new Set(options.registered);
  const rows: ImportRow[] = [];
  const servers: Record<string, ClientEntry> = { ...config.servers };
  const changes: { entry: string; before: string; after: string }[] = [];
  for (const [entry, value] of Object.entries(config.servers)) {
    const was = value && typeof value === 'object' ? describeEntry(value) : '(not an object)';
    const translation =
      value && typeof value === 'object'
        ? translateEntry(value)
        : ({ kind: 'skip', reason: 'it is not an object' } as const);
    if (translation.kind === 'ringfence') {
      rows.push({ entry, was, outcome: 'already through ringfence', notes: [] });
      continue;
    }
    if (translation.kind === 'skip') {
      rows.push({ entry, was, outcome: 'skipped', reason: redactText(translation.reason), notes: [] });
      continue;
    }
    const server = serverNameFor(entry, taken);
    let moved: readonly string[] = [];
    if (!options.dryRun) {
      options.progress?.(`Registering ${entry} as ${server} (${was})`);
      let stored: readonly string[] = [];
      try {
        let input = translation.input;
        if (options.storeSecrets) {
          const result = await options.storeSecrets(server, input);
          ({ input, stored } = result);
          moved = result.notes;
        }
        await options.register({ name: server, ...input });
      } catch (error) {
        // A refusal may quote what it refused (a URL, an argument): shown through the redactor.
        const kept =
          stored.length > 0
            ? ` Its values are kept in the credential store as ${stored.join(', ')} (ringfence secret ls); register it by hand with -e VAR=@secret:NAME.`
            : '';
        rows.push({
          entry,
          was,
          outcome: 'skipped',
          reason: redactText((error as Error).message) + kept,
          notes: [],
        });
        continue;
      }
    }
    taken.add(server);
    const after = ringfenceEntry(options.kind, options.launch, options.home, server);
    servers[entry] = after;
    changes.push({ entry, before: was, after: describeEntry(after) });
    rows.push({
      entry,
      was,
      outcome: options.dryRun ? 'would import' : 'imported',
      server,
      notes: [...translation.notes, ...moved].map(redactText),
      ...(translation.input.oauth ? { login: `ringfence mcp auth login ${server}` } : {}),
    });
  }
  const shown = { path: config.path, target: config.target, rows, changes };
  if (options.dryRun || changes.length === 0) return shown;
  options.beforeWrite?.(shown);
  const backup = await backupClientConfig(config);
  await writeClientConfig(config, servers);
  return { ...shown, backup };
}
