import { Args, Flags } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import { registerServer, registrationSummary } from '@ringfence/gateway/registration';
import { login, OAuthTokenStore } from '@ringfence/gateway/remote-auth';
import { RingfenceCommand } from '../../lib/base-command.js';
import { connectEngine } from '../../lib/engine.js';
import { issuerChecks, openBrowser, readSecretFromStdin } from '../../lib/oauth.js';
import { loadPolicyView } from '../../lib/serving.js';

export default class McpAdd extends RingfenceCommand {
  static override description =
    'Register an MCP server: a container image (--image), an npm package built into a local image (--npm: the copy installed here if its exact version is, else fetched from the configured npm registry into RINGFENCE_HOME/npm with install scripts disabled, once per version), or a remote streamable-HTTP server (--url). Contained servers get no network unless --egress / --egress-allow say otherwise. Tools are pinned the first time the gateway sees them (with --review-first, or under a policy whose first_sight is withhold, withheld until you approve them).';

  static override examples = [
    '<%= config.bin %> mcp add memory --npm @modelcontextprotocol/server-memory@2026.8.31',
    '<%= config.bin %> mcp add files --npm @modelcontextprotocol/server-filesystem@2026.8.31 --mount docs --mount out:rw -- /workspace/docs /workspace/out',
    '<%= config.bin %> mcp add github --image ghcr.io/example/github-mcp:1.2 --egress-allow api.github.com -e GITHUB_TOKEN=$GITHUB_TOKEN',
    '<%= config.bin %> mcp add docs --url https://mcp.example.com/mcp --header "Authorization=Bearer $TOKEN"',
    '<%= config.bin %> mcp add calc --npm @example/calc-mcp@1.0.0 --review-first',
    '<%= config.bin %> mcp add issues --url https://mcp.issues.example.com/mcp --oauth --login',
    '<%= config.bin %> mcp add render --url https://render.example.com/mcp --call-timeout 120 --call-ceiling 1800 --max-result-mb 12',
  ];

  static override strict = false;
  static override args = {
    name: Args.string({ required: true, description: 'server name: [a-z0-9][a-z0-9-]{0,31}' }),
  };

  static override flags = {
    image: Flags.string({
      description: 'container image already on this host (never pulled implicitly)',
      exclusive: ['npm', 'url'],
    }),
    npm: Flags.string({
      description:
        'PACKAGE[@VERSION|@RANGE] built into a local image (fetched once, install scripts disabled, when not installed here)',
      exclusive: ['image', 'url'],
    }),
    url: Flags.string({
      description: 'streamable HTTP endpoint of a remote server (https, or http on loopback)',
      exclusive: ['image', 'npm'],
    }),
    egress: Flags.string({
      description: 'network for a contained server: deny (default) or any',
      options: ['deny', 'any'],
    }),
    'egress-allow': Flags.string({
      description: 'allow egress to HOST[:PORT] through the proxy (repeatable)',
      multiple: true,
    }),
    'egress-allow-address': Flags.string({
      description: 'let the proxy reach this private CIDR (on-prem, tests) (repeatable)',
      multiple: true,
    }),
    env: Flags.string({
      char: 'e',
      description: 'environment variable KEY=VALUE for the server (repeatable)',
      multiple: true,
    }),
    'allow-tool': Flags.string({ description: 'expose only these tools (repeatable)', multiple: true }),
    mount: Flags.string({
      description: 'workspace subfolder PATH[:rw] mounted at /workspace/PATH (read-only by default)',
      multiple: true,
    }),
    header: Flags.string({
      description: 'HTTP header KEY=VALUE for a remote server (repeatable)',
      multiple: true,
    }),
    'call-timeout': Flags.integer({
      description:
        'seconds a call may go without an answer or a progress notification before it fails (default 60)',
    }),
    'call-ceiling': Flags.integer({
      description:
        'seconds a call may run in all, progress or not (default 600, or --call-timeout if longer); the policy may cap it',
    }),
    'allow-sampling': Flags.boolean({
      description:
        "let the server ask the client's model (sampling) while it answers a call; a signed policy must allow it too (mcp[].allow_sampling)",
    }),
    'allow-elicitation': Flags.boolean({
      description:
        'let the server ask the person questions (elicitation) while it answers a call; a signed policy must allow it too (mcp[].allow_elicitation)',
    }),
    'review-first': Flags.boolean({
      description:
        "no trust on first use: withhold every tool, prompt and resource of this server from clients until you have read them whole (ringfence mcp pins show NAME) and approved them at a terminal (ringfence mcp pins approve NAME). A signed policy's first_sight: withhold does this for you; this flag can make it stricter, never weaker",
    }),
    protocol: Flags.string({
      options: ['2025'],
      description:
        'speak MCP 2025 (initialize, requests in the middle of a call) to this server even when it also offers MCP 2026-07-28; without it ringfence speaks the newest era the server offers, probed once',
    }),
    oauth: Flags.boolean({
      description:
        'the remote server is protected by OAuth (MCP authorization): ringfence logs in through your browser (ringfence mcp auth login NAME, or --login now) and holds the tokens',
      dependsOn: ['url'],
    }),
    'client-id': Flags.string({
      description:
        'a client registered by hand with the authorization server (else: metadata document or dynamic registration)',
      dependsOn: ['oauth'],
    }),
    'client-secret-stdin': Flags.boolean({
      description:
        "read that client's secret from stdin (never the command line); needs --client-id and --login",
      dependsOn: ['client-id', 'login'],
    }),
    scope: Flags.string({
      description: 'scopes to ask for at login (space-separated)',
      dependsOn: ['oauth'],
    }),
    'client-metadata-url': Flags.string({
      description:
        "your organisation's client ID metadata document (https URL with a path), used as the client_id where the authorization server supports it",
      dependsOn: ['oauth'],
    }),
    login: Flags.boolean({ description: 'log in at once after registering', dependsOn: ['oauth'] }),
    'no-browser': Flags.boolean({
      description: 'with --login: only print the URL to open',
      dependsOn: ['login'],
    }),
    'max-result-mb': Flags.integer({
      description:
        'largest result passed on, in MiB, base64 images and audio counted decoded (default 6, at most 32)',
    }),
  };

  async run(): Promise<void> {
    const { args, argv, flags } = await this.parse(McpAdd);
    const home = resolveHome();
    // Read before registering: a missing secret must not leave a registration that cannot log in.
    const clientSecret = flags['client-secret-stdin'] ? await readSecretFromStdin() : undefined;
    const server = await registerServer(
      {
        name: args.name,
        image: flags.image,
        npm: flags.npm,
        url: flags.url,
        command: (argv as string[]).slice(1),
        egress: flags.egress,
        egressAllow: flags['egress-allow'],
        egressAllowAddress: flags['egress-allow-address'],
        env: flags.env,
        allowTools: flags['allow-tool'],
        mounts: flags.mount,
        headers: flags.header,
        callTimeout: flags['call-timeout'],
        callCeiling: flags['call-ceiling'],
        maxResultMb: flags['max-result-mb'],
        allowSampling: flags['allow-sampling'],
        allowElicitation: flags['allow-elicitation'],
        reviewFirst: flags['review-first'],
        ...(flags.protocol === '2025' ? { protocol: '2025' as const } : {}),
        ...(flags.oauth
          ? {
              oauth: {
                ...(flags['client-id'] ? { client_id: flags['client-id'] } : {}),
                ...(flags.scope ? { scope: flags.scope } : {}),
                ...(flags['client-metadata-url']
                  ? { client_metadata_url: flags['client-metadata-url'] }
                  : {}),
              },
            }
          : {}),
      },
      {
        home,
        policy: await loadPolicyView(home),
        engine: connectEngine,
        from: process.cwd(),
        notify: (line) => this.logToStderr(line),
      },
    );
    this.log(registrationSummary(server));
    if (flags.login && server.transport === 'http') {
      const result = await login(args.name, server, {
        store: new OAuthTokenStore(home),
        print: (line) => this.logToStderr(line),
        ...(flags['no-browser'] ? {} : { openBrowser }),
        ...(clientSecret ? { clientSecret } : {}),
        ...(await issuerChecks(home, args.name)),
      });
      this.log(
        `Logged in to ${args.name} at ${result.issuer} (scope: ${result.scope ?? 'none asked'}; token ${result.token_digest}).`,
      );
    }
  }
}
