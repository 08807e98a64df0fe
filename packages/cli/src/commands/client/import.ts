import { Flags } from '@oclif/core';
import { type ImportResult, importClient, moveSecretsToStore } from '@ringfence/gateway/clients';
import { ServerStore } from '@ringfence/gateway/config';
import { CredentialStore } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import { registerServer } from '@ringfence/gateway/registration';
import { RingfenceCommand } from '../../lib/base-command.js';
import {
  clientArg,
  clientConfigPath,
  configFlag,
  dryRunFlag,
  launchOf,
  throughLink,
} from '../../lib/client-args.js';
import { connectEngine } from '../../lib/engine.js';
import { loadPolicyView } from '../../lib/serving.js';

export default class ClientImport extends RingfenceCommand {
  static override summary = "Move an AI client's MCP servers behind ringfence.";

  static override description =
    'Each entry of the client’s config becomes a registration: `npx [-y] PKG[@VERSION] ARGS…` → --npm PKG@EXACT-VERSION (fetched and locked), `docker run … IMAGE ARGS…` → --image with its env (and workspace mounts), a url entry → --url with its headers. ' +
    '`npx mcp-remote URL` (and a url entry with its client’s own OAuth fields) → --url URL --oauth: ringfence logs in itself (ringfence mcp auth login NAME, once, in the browser); a fixed Authorization header instead keeps it a plain --url registration. ' +
    'Values of env and headers that are credentials (by name or format) move into the credential store (ringfence secret ls: the OS keyring when one answers, else an encrypted file), bound to their server, and are never printed; the registration refers to them as @secret:SERVER-KEY. Entries ringfence cannot contain (uvx, a local program, values with placeholders the client fills in) stay as they are, with the reason. ' +
    'Then each imported entry is pointed at `ringfence mcp serve --only NAME`, under its old name, after a copy of the file is kept beside it. A second run changes nothing.';

  static override examples = [
    '<%= config.bin %> client import claude-desktop --dry-run',
    '<%= config.bin %> client import claude-desktop',
    '<%= config.bin %> client import vscode --config ./.vscode/mcp.json',
  ];

  static override args = { client: clientArg };

  static override flags = {
    config: configFlag,
    'dry-run': dryRunFlag,
    'review-first': Flags.boolean({
      description:
        'register every imported server with --review-first: nothing of it reaches the client until you read its definitions whole (ringfence mcp pins show NAME) and approve them at a terminal (ringfence mcp pins approve NAME)',
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ClientImport);
    const kind = args.client as Parameters<typeof clientConfigPath>[0];
    const home = resolveHome();
    const dryRun = flags['dry-run'];
    const policy = dryRun ? undefined : await loadPolicyView(home);
    let shown = false;
    const show = (result: ImportResult) => {
      shown = true;
      const width = Math.max(5, ...result.rows.map((row) => row.entry.length));
      this.log(`${'entry'.padEnd(width)}  outcome`);
      for (const row of result.rows) {
        const outcome = row.server ? `${row.outcome} as ${row.server}` : row.outcome;
        this.log(`${row.entry.padEnd(width)}  ${outcome}${row.reason ? `: ${row.reason}` : ''}`);
        for (const note of row.notes) this.log(`${' '.repeat(width)}    note: ${note}`);
        if (row.login)
          this.log(
            `${' '.repeat(width)}    login due: ${row.login} (once, in your browser, before its first call)`,
          );
      }
      if (result.changes.length === 0) {
        this.log(`\nNothing to change in ${result.path}.`);
        return;
      }
      this.log(`\n${dryRun ? 'Would change' : 'Changing'} ${result.path}${throughLink(result)}:`);
      for (const change of result.changes) {
        this.log(`  - ${change.entry}: ${change.before}`);
        this.log(`  + ${change.entry}: ${change.after}`);
      }
    };
    const credentials = new CredentialStore(home);
    const result = await importClient({
      kind,
      path: clientConfigPath(kind, flags.config),
      home,
      launch: launchOf(this.config.root),
      dryRun,
      registered: (await new ServerStore(home).list()).map((s) => s.name),
      register: (input) =>
        registerServer(flags['review-first'] ? { ...input, reviewFirst: true } : input, {
          home,
          policy: policy!,
          engine: connectEngine,
          from: process.cwd(),
          notify: (line) => this.logToStderr(`  ${line}`),
        }),
      // Env and header values go to the credential store; the registration names them.
      storeSecrets: (server, input) => moveSecretsToStore(server, input, credentials),
      progress: (line) => this.logToStderr(line),
      beforeWrite: show,
    });
    if (!shown) show(result);
    if (result.backup) this.log(`The file as it was is kept in ${result.backup}.`);
    const logins = result.rows.flatMap((row) => (row.login && row.outcome === 'imported' ? [row.login] : []));
    if (logins.length > 0)
      this.log(
        `Log in once for each server behind OAuth (until then its calls answer that a login is due): ${logins.join('; ')}`,
      );
    if (result.backup)
      this.log(
        flags['review-first']
          ? `Restart ${kind}: the same servers, now contained and audited, withheld until you approve them: ringfence mcp tools, then ringfence mcp pins show NAME and ringfence mcp pins approve NAME at a terminal`
          : `Restart ${kind}: the same servers, now contained, pinned and audited. Read what gets pinned with: ringfence mcp tools, then ringfence mcp pins show NAME`,
      );
  }
}
