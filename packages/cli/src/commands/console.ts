import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Flags } from '@oclif/core';
import { startConsole } from '@ringfence/gateway/console';
import { resolveHome } from '@ringfence/gateway/home';
import { installedPolicyDir } from '@ringfence/policy';
import { RingfenceCommand } from '../lib/base-command.js';

export default class Console extends RingfenceCommand {
  static override summary =
    'Serve a local, read-only page: servers, pending reviews, decisions, egress, policy.';

  static override description =
    'Reads the files of RINGFENCE_HOME (and follows the audit log while a gateway writes it); writes nothing. The address it prints carries a one-time token, which the page exchanges for a cookie. Loopback only unless --insecure-listen. Approving stays at the terminal: the page shows the command. See docs/console.md.';

  static override examples = [
    '<%= config.bin %> console',
    '<%= config.bin %> console --listen 127.0.0.1:8767 --open',
  ];

  static override flags = {
    listen: Flags.string({
      description: 'HOST:PORT to listen on (port 0: any free port)',
      default: '127.0.0.1:0',
      helpValue: 'HOST:PORT',
    }),
    open: Flags.boolean({ description: 'open the page in the default browser (xdg-open or open)' }),
    'insecure-listen': Flags.boolean({ description: 'allow a non-loopback --listen address' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Console);
    const home = resolveHome();
    const policyDir = installedPolicyDir();
    const running = await startConsole({
      home,
      address: flags.listen,
      insecureListen: flags['insecure-listen'],
      ...(process.env.RINGFENCE_CONSOLE_TOKEN ? { token: process.env.RINGFENCE_CONSOLE_TOKEN } : {}),
      watchFiles: [join(policyDir, 'policy.json'), join(policyDir, 'root.json')],
    });
    this.logToStderr(`ringfence: console for ${home}, read-only, at ${running.origin}`);
    this.logToStderr(`ringfence: open this address (its token is exchanged for a cookie): ${running.url}`);
    this.logToStderr('ringfence: Ctrl-C stops it.');
    if (flags.open) {
      const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
      spawn(opener, [running.url], { stdio: 'ignore', detached: true })
        .on('error', () =>
          this.logToStderr(`ringfence: could not run ${opener}; open the address above yourself.`),
        )
        .unref();
    }
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await running.close();
  }
}
