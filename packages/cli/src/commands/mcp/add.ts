import { Args, Command, Flags } from '@oclif/core';
import {
  buildNpmServerImage,
  type ContainerServerConfig,
  type EgressRule,
  type HttpServerConfig,
  type MountRule,
  type PolicyView,
  parseNpmSpec,
  resolveHome,
  type ServerConfig,
  ServerStore,
  validateRemoteUrl,
  validateServerName,
} from '@ringfence/gateway';
import type Docker from 'dockerode';
import { connectEngine, ensureBaseImage } from '../../lib/engine.js';
import { parseKeyValues } from '../../lib/flags.js';
import { checkRegistrationAgainstPolicy } from '../../lib/policy-checks.js';
import { loadPolicyView } from '../../lib/serving.js';

const HOST = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:\d{1,5})?$/i;
const CIDR = /^[0-9a-f:.]+\/\d{1,3}$/i;

export default class McpAdd extends Command {
  static override description =
    'Register an MCP server: a container image (--image), an npm package installed on this machine built into a local image (--npm), or a remote streamable-HTTP server (--url). Contained servers get no network unless --egress / --egress-allow say otherwise. Tools are pinned the first time the gateway sees them.';

  static override examples = [
    '<%= config.bin %> mcp add memory --npm @modelcontextprotocol/server-memory@2026.8.31',
    '<%= config.bin %> mcp add files --npm @modelcontextprotocol/server-filesystem@2026.8.31 --mount docs --mount out:rw -- /workspace/docs /workspace/out',
    '<%= config.bin %> mcp add github --image ghcr.io/example/github-mcp:1.2 --egress-allow api.github.com -e GITHUB_TOKEN=$GITHUB_TOKEN',
    '<%= config.bin %> mcp add docs --url https://mcp.example.com/mcp --header "Authorization=Bearer $TOKEN"',
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
      description: 'PACKAGE@VERSION installed on this machine, built into a local image',
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
  };

  async run(): Promise<void> {
    const { args, argv, flags } = await this.parse(McpAdd);
    const command = (argv as string[]).slice(1);
    try {
      validateServerName(args.name);
      const sources = [flags.image, flags.npm, flags.url].filter(Boolean).length;
      if (sources !== 1) throw new Error('Give exactly one of --image, --npm or --url.');
      const home = resolveHome();
      const policy = await loadPolicyView(home);
      let server: ServerConfig;
      if (flags.url) server = this.remote(args.name, flags);
      else {
        const contained = await this.contained(args.name, flags, command, policy);
        checkRegistrationAgainstPolicy(policy, contained.server, contained.image);
        server = contained.server;
      }
      await new ServerStore(home).add(server);
      this.log(this.summary(server));
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
  }

  private remote(
    name: string,
    flags: { url?: string; header?: string[]; 'allow-tool'?: string[] } & Record<string, unknown>,
  ): HttpServerConfig {
    for (const flag of ['egress', 'egress-allow', 'egress-allow-address', 'env', 'mount'] as const) {
      if (flags[flag] !== undefined) throw new Error(`--${flag} applies to contained servers, not to --url.`);
    }
    validateRemoteUrl(flags.url!);
    const headers = parseKeyValues(flags.header, '--header');
    return {
      name,
      transport: 'http',
      url: flags.url!,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(flags['allow-tool'] ? { allow_tools: flags['allow-tool'] } : {}),
    };
  }

  private async contained(
    name: string,
    flags: {
      image?: string;
      npm?: string;
      egress?: string;
      'egress-allow'?: string[];
      'egress-allow-address'?: string[];
      env?: string[];
      'allow-tool'?: string[];
      mount?: string[];
      header?: string[];
    },
    command: string[],
    policy: PolicyView,
  ): Promise<{ server: ContainerServerConfig; image: Docker.ImageInspectInfo }> {
    if (flags.header) throw new Error('--header applies to remote servers (--url) only.');
    const hosts = (flags['egress-allow'] ?? []).map((h) => h.trim().toLowerCase());
    for (const host of hosts)
      if (!HOST.test(host))
        throw new Error(
          `--egress-allow "${host}" is not HOST[:PORT] (e.g. api.github.com or *.example.com:8443).`,
        );
    const addresses = flags['egress-allow-address'] ?? [];
    for (const cidr of addresses)
      if (!CIDR.test(cidr))
        throw new Error(`--egress-allow-address "${cidr}" is not a CIDR (e.g. 10.0.0.0/8).`);
    if (flags.egress && hosts.length > 0)
      throw new Error(
        '--egress and --egress-allow exclude each other: --egress-allow already means "only these hosts".',
      );
    if (addresses.length > 0 && hosts.length === 0)
      throw new Error('--egress-allow-address needs at least one --egress-allow host.');
    const egress: EgressRule =
      hosts.length > 0
        ? { mode: 'allow', hosts, ...(addresses.length > 0 ? { addresses } : {}) }
        : { mode: (flags.egress as 'deny' | 'any' | undefined) ?? policy.defaultEgress };
    const mounts: MountRule[] = (flags.mount ?? []).map((spec) => {
      const rw = spec.endsWith(':rw');
      const path = rw ? spec.slice(0, -3) : spec.replace(/:ro$/, '');
      if (!path || path.startsWith('/') || path.split('/').includes('..')) {
        throw new Error(
          `--mount "${spec}" must be a relative path inside the workspace (e.g. docs or out:rw).`,
        );
      }
      return { path, mode: rw ? 'rw' : 'ro' };
    });
    const env = parseKeyValues(flags.env, '--env');
    const docker = await connectEngine();
    let image: string;
    if (flags.npm) {
      const spec = parseNpmSpec(flags.npm);
      image = (
        await buildNpmServerImage(docker, {
          spec,
          from: process.cwd(),
          baseRef: await ensureBaseImage(docker),
        })
      ).ref;
    } else {
      image = flags.image!;
    }
    let info: Docker.ImageInspectInfo;
    try {
      info = await docker.getImage(image).inspect();
    } catch {
      throw new Error(
        `The image ${image} is not on this host; ringfence never pulls implicitly. Pull or build it first (docker pull ${image}), then add the server again.`,
      );
    }
    const server: ContainerServerConfig = {
      name,
      transport: 'container',
      image,
      image_id: info.Id,
      ...(command.length > 0 ? { command } : {}),
      egress,
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(flags['allow-tool'] ? { allow_tools: flags['allow-tool'] } : {}),
      ...(mounts.length > 0 ? { mounts } : {}),
    };
    return { server, image: info };
  }

  private summary(server: ServerConfig): string {
    if (server.transport === 'http') {
      return `Registered ${server.name} (remote ${new URL(server.url).host}). Its tools are pinned the first time the gateway starts: ringfence mcp tools`;
    }
    const egress =
      server.egress.mode === 'allow'
        ? `egress only to ${server.egress.hosts?.join(', ')}`
        : server.egress.mode === 'any'
          ? 'unrestricted egress'
          : 'no network';
    return `Registered ${server.name} (image ${server.image}, ${server.image_id.slice(0, 19)}; ${egress}). Its tools are pinned the first time the gateway starts: ringfence mcp tools`;
  }
}
