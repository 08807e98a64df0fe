import { Args, Flags } from '@oclif/core';
import { CREDENTIAL_CLASSES, CredentialError, CredentialStore } from '@ringfence/gateway/credentials';
import { resolveHome } from '@ringfence/gateway/home';
import { RingfenceCommand } from '../../lib/base-command.js';
import { readSecretValue } from '../../lib/secret-input.js';

export const bindList = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export default class SecretSet extends RingfenceCommand {
  static override description =
    'Store a credential: its value is read from the terminal (not echoed) or from stdin, never from the command line; it goes to the OS keyring when a Secret Service answers, else to an encrypted file in RINGFENCE_HOME. Servers use it with mcp add -e VAR=@secret:NAME (or --header NAME=@secret:NAME) and only when it is bound to them.';

  static override examples = [
    '<%= config.bin %> secret set github-token --class github --bind github',
    'printf %s "$TOKEN" | <%= config.bin %> secret set docs-key --class bearer --bind docs',
  ];

  // Checked by hand: oclif's own refusal of an extra argument would quote it, and it may be the value.
  static override strict = false;
  static override args = {
    name: Args.string({ required: true, description: 'credential name (letters, digits, _ . -)' }),
  };

  static override flags = {
    class: Flags.string({
      description: `what kind of credential it is: ${CREDENTIAL_CLASSES.join(', ')} (decides which hosts it may reach; docs/credentials.md)`,
      required: true,
    }),
    bind: Flags.string({
      description: 'SERVER[,SERVER]: the servers it may be given to (more later with: ringfence secret bind)',
    }),
  };

  async run(): Promise<void> {
    const { args, argv, flags } = await this.parse(SecretSet);
    if (argv.length > 1)
      throw new CredentialError(
        'CREDENTIAL_USAGE',
        `secret set takes the name only; ${argv.length - 1} more argument(s) were given and ignored (not shown: one may be the value). A value on the command line stays in the shell's history: type it at the prompt or pipe it on stdin, e.g. printf %s "$TOKEN" | ringfence secret set ${args.name} --class ${flags.class}. Nothing was stored.`,
      );
    const store = new CredentialStore(resolveHome());
    const value = await readSecretValue(args.name);
    const bindTo = bindList(flags.bind);
    const status = await store.set({ name: args.name, class: flags.class, bindTo, value });
    this.log(
      `Stored ${args.name} (class ${flags.class}) in ${status.where}${status.keyringUnavailable ? ` — the OS keyring is not used: ${status.keyringUnavailable}` : ''}. ${bindTo.length > 0 ? `Bound to: ${bindTo.join(', ')}.` : `Bound to no server yet: ringfence secret bind ${args.name} --server SERVER.`} Use it with: ringfence mcp add SERVER ... -e VAR=@secret:${args.name}`,
    );
  }
}
