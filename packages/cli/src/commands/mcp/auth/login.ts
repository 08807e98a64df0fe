import { Args, Flags } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import { type LoginResult, login, OAuthTokenStore } from '@ringfence/gateway/remote-auth';
import { RingfenceCommand } from '../../../lib/base-command.js';
import {
  inSeconds,
  issuerChecks,
  oauthRegistration,
  openBrowser,
  readSecretFromStdin,
} from '../../../lib/oauth.js';

export default class McpAuthLogin extends RingfenceCommand {
  static override summary = 'Log in to a remote server protected by OAuth, through your browser.';

  static override description =
    "Discovers the server's authorization server (RFC 9728, RFC 8414), registers ringfence with it when needed, and runs authorization code with PKCE through your browser and a loopback redirect on 127.0.0.1. The URL is always printed (stderr); --no-browser only prints it. Tokens are kept in RINGFENCE_HOME/oauth-tokens.json (0600) and never printed. With --scope, or when the server asked for more (step-up), the login asks for what you already granted plus what is needed. See docs/remote-auth.md.";

  static override examples = [
    '<%= config.bin %> mcp auth login issues',
    '<%= config.bin %> mcp auth login issues --scope "issues:write"',
    '<%= config.bin %> mcp auth login issues --no-browser',
  ];

  static override enableJsonFlag = true;

  static override args = { name: Args.string({ required: true, description: 'server name' }) };

  static override flags = {
    scope: Flags.string({ description: 'scopes needed besides those already granted (space-separated)' }),
    'no-browser': Flags.boolean({ description: 'do not open a browser; only print the URL (stderr)' }),
    'client-secret-stdin': Flags.boolean({
      description: "read the pre-registered client's secret from stdin (never from the command line)",
    }),
  };

  async run(): Promise<LoginResult> {
    const { args, flags } = await this.parse(McpAuthLogin);
    const home = resolveHome();
    const server = await oauthRegistration(home, args.name);
    const clientSecret = flags['client-secret-stdin'] ? await readSecretFromStdin() : undefined;
    const result = await login(args.name, server, {
      store: new OAuthTokenStore(home),
      print: (line) => this.logToStderr(line),
      ...(flags['no-browser'] ? {} : { openBrowser }),
      ...(flags.scope ? { scope: flags.scope } : {}),
      ...(clientSecret ? { clientSecret } : {}),
      ...(await issuerChecks(home, args.name)),
    });
    this.log(
      `Logged in to ${args.name} at ${result.issuer} (client: ${result.client_via}; scope: ${result.scope ?? 'none asked'}; expires in ${inSeconds(result.expires_at, Date.now())}; refresh token: ${result.refresh_token ? 'yes' : 'no'}; token ${result.token_digest}).`,
    );
    return result;
  }
}
