import { readFile } from 'node:fs/promises';
import { Flags } from '@oclif/core';
import {
  EraStore,
  type EraVerdict,
  registrationDigest,
  type ServerConfig,
  ServerStore,
} from '@ringfence/gateway/config';
import { describePolicy, legacyClientsNote, oauthLoginLine } from '@ringfence/gateway/doctor';
import { resolveHome } from '@ringfence/gateway/home';
import { DEFINITION_KINDS, PinStore, pendingOf, pinnedOf } from '@ringfence/gateway/pins';
import { clientRequestsOf } from '@ringfence/gateway/registration';
import { type OAuthEntry, OAuthTokenStore } from '@ringfence/gateway/remote-auth';
import { stderrLogPath } from '@ringfence/gateway/runtime';
import { redactImage, redactText, redactUrl, rendered } from '@ringfence/gateway/text';
import { loadInstalledPolicy } from '@ringfence/policy';
import { RingfenceCommand } from '../../lib/base-command.js';

/** Tools and prompts together. */
const count = (records: (kind: (typeof DEFINITION_KINDS)[number]) => Readonly<Record<string, unknown>>) =>
  DEFINITION_KINDS.reduce((sum, kind) => sum + Object.keys(records(kind)).length, 0);

interface Row {
  name: string;
  transport: ServerConfig['transport'];
  target: string;
  egress?: string;
  /** What it may ask the client for (`mcp add --allow-sampling`, `--allow-elicitation`), within the policy. */
  asks: string[];
  /** `mcp add --review-first`: withheld on first sight until a person approves (the policy may say so too). */
  review_first: boolean;
  pinned: number;
  withheld: number;
  allow_tools: readonly string[];
  /** Last 8 KiB of the server's stderr from its last session (env values and credentials redacted). */
  stderr?: string;
  /** The protocol era it was found to speak (`modern`: 2026-07-28, `legacy`: 2025); absent: not probed yet. */
  era?: 'modern' | 'legacy';
  /** A 2026 server's 2025 clients: served in `2025` (a 2025 session beside) or `2026`; absent: not learnt yet. */
  legacy_clients?: '2025' | '2026';
  /** An OAuth registration's login (`mcp add --oauth`): whether one is due, and what to run. */
  oauth?: { login_needed: boolean; status: string; command?: string };
}

/** A row's login: the doctor's words (no token: its digest at most), or why the store cannot be read. */
function oauthRow(
  server: string,
  logins: Readonly<Record<string, OAuthEntry>> | Error,
): NonNullable<Row['oauth']> {
  if (logins instanceof Error) return { login_needed: true, status: logins.message };
  const { needed, line, command } = oauthLoginLine(server, logins[server]);
  return { login_needed: needed, status: line, ...(command ? { command } : {}) };
}

export default class McpLs extends RingfenceCommand {
  static override description =
    'List registered servers with their pinned and withheld (pending review) tool and prompt counts.';
  static override examples = ['<%= config.bin %> mcp ls', '<%= config.bin %> mcp ls --json'];
  static override enableJsonFlag = true;
  static override flags = {
    logs: Flags.boolean({
      description: "show each contained server's last stderr (8 KiB, env values redacted)",
    }),
  };

  async run(): Promise<{ policy: string; servers: Row[] }> {
    const { flags } = await this.parse(McpLs);
    const home = resolveHome();
    const servers = await new ServerStore(home).list();
    const pins = await new PinStore(home).read();
    // A cache of what each server speaks: a damaged one only means "probed again".
    const eras = await new EraStore(home).all().catch(() => ({}) as Record<string, EraVerdict>);
    // Read only when an OAuth registration is listed: a damaged file is said on its row.
    const logins = servers.some((s) => s.transport === 'http' && s.oauth)
      ? await new OAuthTokenStore(home).all().catch((error: Error) => error)
      : {};
    const rows: Row[] = await Promise.all(
      servers.map(async (server) => {
        const serverPins = pins.servers[server.name];
        return {
          name: server.name,
          transport: server.transport,
          // A remote URL may carry a token in its query or path, an image reference userinfo: shown
          // (and in --json) redacted.
          target: server.transport === 'http' ? redactUrl(server.url) : redactImage(server.image),
          ...(server.transport === 'container'
            ? {
                egress:
                  server.egress.mode === 'allow'
                    ? `allow ${server.egress.hosts?.join(',') ?? ''}`
                    : server.egress.mode,
              }
            : {}),
          asks: clientRequestsOf(server)?.split(', ') ?? [],
          review_first: server.review_first === true,
          pinned: serverPins ? count((kind) => pinnedOf(serverPins, kind)) : 0,
          withheld: serverPins ? count((kind) => pendingOf(serverPins, kind)) : 0,
          allow_tools: server.allow_tools ?? [],
          ...(eras[server.name]?.registration === registrationDigest(server)
            ? {
                era: eras[server.name]!.era,
                ...legacyClientsOf(eras[server.name]!),
              }
            : {}),
          ...(server.transport === 'http' && server.oauth ? { oauth: oauthRow(server.name, logins) } : {}),
          ...(server.transport === 'container'
            ? {
                // Env values are redacted when it is kept (stderr-tail.ts); what the server
                // printed of its URLs, headers and tokens is redacted here, as every printer does.
                stderr: redactText(await readFile(stderrLogPath(home, server.name), 'utf8').catch(() => '')),
              }
            : {}),
        };
      }),
    );
    const installed = await loadInstalledPolicy({ home, recordState: false });
    const policy = !installed.ok
      ? `REFUSED (${installed.code}): ${installed.message} The gateway will not start until this is fixed.`
      : installed.present
        ? describePolicy(installed)
        : 'none installed (local rules only)';
    if (!this.jsonEnabled()) {
      this.log(`organisation policy: ${rendered(policy, 'line')}`);
      if (rows.length === 0)
        this.log('No servers registered. Add one with: ringfence mcp add NAME --url URL');
      for (const row of rows) {
        // Nothing pinned yet but something pending: a first sight that withheld, reviewed whole.
        const review =
          row.pinned === 0 ? `ringfence mcp pins show ${row.name}` : `ringfence mcp pins diff ${row.name}`;
        const pending = row.withheld > 0 ? `, ${row.withheld} withheld (review: ${review})` : '';
        const pinned =
          row.pinned === 0 && row.withheld === 0 ? 'not seen yet' : `${row.pinned} pinned${pending}`;
        this.log(
          `${rendered(row.name, 'name')}  ${row.transport}  ${rendered(row.target, 'name')}${row.egress ? `  egress ${rendered(row.egress, 'line')}` : ''}${row.asks.length ? `  may ask ${row.asks.join(', ')} (if the policy allows)` : ''}${row.review_first ? '  review first' : ''}${row.era ? `  speaks MCP ${row.era === 'modern' ? '2026-07-28' : '2025'}${legacyClientsNote(row.legacy_clients)}` : ''}  ${pinned}`,
        );
        if (row.oauth) this.log(`    oauth: ${rendered(row.oauth.status, 'line')}`);
        // A server's own stderr: its lines are kept, each marked as its, and nothing in them is raw.
        if (flags.logs && row.stderr)
          this.log(rendered(row.stderr.replace(/\n+$/, '')).replace(/^/gm, '    | '));
      }
    }
    return { policy, servers: rows };
  }
}

/** How a 2026 server's 2025 clients are served, when learnt (see `EraVerdict.legacy_clients`). */
function legacyClientsOf(verdict: EraVerdict): { legacy_clients?: '2025' | '2026' } {
  return verdict.era === 'modern' && verdict.legacy_clients ? { legacy_clients: verdict.legacy_clients } : {};
}
