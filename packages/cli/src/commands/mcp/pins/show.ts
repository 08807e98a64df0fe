import { Args, Command } from '@oclif/core';
import { PinStore, printable, resolveHome } from '@ringfence/gateway';

interface Shown {
  server: string;
  pinned: { tool: string; digest: string; pinned_at: string; description?: string }[];
  pending: { tool: string; digest: string; kind: string; seen_at: string }[];
}

export default class PinsShow extends Command {
  static override description =
    'Show pinned tool definitions (and pending ones awaiting review) for one server or all.';
  static override examples = [
    '<%= config.bin %> mcp pins show',
    '<%= config.bin %> mcp pins show docs --json',
  ];
  static override enableJsonFlag = true;
  static override args = { server: Args.string({ required: false, description: 'server name' }) };

  async run(): Promise<{ servers: Shown[] }> {
    const { args } = await this.parse(PinsShow);
    let file: Awaited<ReturnType<PinStore['read']>>;
    try {
      file = await new PinStore(resolveHome()).read();
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
    const names = args.server ? [args.server] : Object.keys(file.servers).sort();
    if (args.server && !file.servers[args.server]) {
      this.error(
        `No pins for "${args.server}": the gateway pins a server the first time it starts it (ringfence mcp tools).`,
        { exit: 1 },
      );
    }
    const servers: Shown[] = names.map((server) => {
      const pins = file.servers[server]!;
      return {
        server,
        pinned: Object.entries(pins.tools).map(([tool, pin]) => ({
          tool,
          digest: pin.digest,
          pinned_at: pin.pinned_at,
          ...(typeof pin.definition.description === 'string'
            ? { description: pin.definition.description }
            : {}),
        })),
        pending: Object.entries(pins.pending).map(([tool, p]) => ({
          tool,
          digest: p.digest,
          kind: p.kind,
          seen_at: p.seen_at,
        })),
      };
    });
    if (!this.jsonEnabled()) {
      if (servers.length === 0) this.log('No pins yet.');
      for (const s of servers) {
        this.log(`${s.server}: ${s.pinned.length} pinned, ${s.pending.length} pending`);
        for (const p of s.pinned)
          this.log(
            printable(`  ${p.tool}  ${p.digest}  ${(p.description ?? '').split('\n')[0]?.slice(0, 80)}`),
          );
        for (const p of s.pending)
          this.log(
            printable(
              `  ! ${p.tool}  ${p.digest}  ${p.kind}, withheld since ${p.seen_at} (ringfence mcp pins diff ${s.server})`,
            ),
          );
      }
    }
    return { servers };
  }
}
