import { Flags } from '@oclif/core';
import { setupClient } from '@ringfence/gateway/clients';
import { ServerStore } from '@ringfence/gateway/config';
import { resolveHome } from '@ringfence/gateway/home';
import { RingfenceCommand } from '../../lib/base-command.js';
import {
  clientArg,
  clientConfigPath,
  configFlag,
  dryRunFlag,
  launchOf,
  throughLink,
} from '../../lib/client-args.js';

export default class ClientSetup extends RingfenceCommand {
  static override summary = "Write ringfence into an AI client's MCP config.";

  static override description =
    'One entry that starts `ringfence mcp serve`, or with --per-server one `ringfence mcp serve --only NAME` entry per registered server, so the client keeps its per-server view. ' +
    'Each entry names this ringfence by absolute path and carries RINGFENCE_HOME, so a client that starts servers with a minimal environment still finds your servers. ' +
    'The file is copied beside itself before it changes; other entries are left alone. Restart the client afterwards.';

  static override examples = [
    '<%= config.bin %> client setup claude-desktop',
    '<%= config.bin %> client setup vscode --per-server',
    '<%= config.bin %> client setup cursor --config ./.cursor/mcp.json --dry-run',
  ];

  static override args = { client: clientArg };

  static override flags = {
    config: configFlag,
    'per-server': Flags.boolean({ description: 'one entry per registered server (mcp serve --only NAME)' }),
    'dry-run': dryRunFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ClientSetup);
    const kind = args.client as Parameters<typeof clientConfigPath>[0];
    const home = resolveHome();
    const perServer = flags['per-server']
      ? (await new ServerStore(home).list()).map((s) => s.name)
      : undefined;
    if (perServer?.length === 0) {
      this.error(
        `No servers are registered in ${home}, so --per-server would write no entry. Register one first (ringfence mcp add NAME …, or ringfence client import ${kind}), or run this without --per-server.`,
        { exit: 1 },
      );
    }
    const result = await setupClient({
      kind,
      path: clientConfigPath(kind, flags.config),
      home,
      launch: launchOf(this.config.root),
      ...(perServer ? { perServer } : {}),
      dryRun: flags['dry-run'],
    });
    if (result.changes.length === 0) {
      this.log(`${result.path} already starts ringfence with home ${home}; nothing changed.`);
      return;
    }
    this.log(`${flags['dry-run'] ? 'Would change' : 'Changed'} ${result.path}${throughLink(result)}:`);
    for (const change of result.changes) {
      if (change.before) this.log(`  - ${change.entry}: ${change.before}`);
      if (change.after) this.log(`  + ${change.entry}: ${change.after}`);
    }
    if (result.backup) this.log(`The file as it was is kept in ${result.backup}.`);
    if (!flags['dry-run']) this.log(`Restart ${kind} to use it.`);
  }
}
