import { fstatSync, statSync } from 'node:fs';
import { EXIT, parseSidecarArgv, type SidecarArgs, type SidecarInvocation, USAGE } from '../contract/argv.js';
import { EgressProxyError } from '../contract/errors.js';
import { formatListeningLine } from '../contract/listening.js';
import { startEgressProxy } from '../proxy.js';

function say(event: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), ...event })}\n`);
}

/**
 * `--lifeline` exists so the proxy dies with the process that started it. A stdin that is
 * already closed, or /dev/null, would end at once, so starting would be pointless: say so.
 */
function lifelineProblem(): string | null {
  let stat: ReturnType<typeof fstatSync>;
  try {
    stat = fstatSync(0);
  } catch {
    return 'standard input is closed';
  }
  if (stat.isCharacterDevice()) {
    try {
      const devNull = statSync('/dev/null');
      if (devNull.rdev === stat.rdev) return 'standard input is /dev/null';
    } catch {
      // No /dev/null to compare with (a scratch image): fall through and rely on EOF.
    }
  }
  if (stat.isFile()) return 'standard input is a regular file, which ends';
  return null;
}

export async function main(argv: readonly string[]): Promise<number> {
  let cli: SidecarInvocation;
  try {
    // Validates every value too, so a typo is a usage error, not a half-started proxy.
    cli = parseSidecarArgv(argv);
  } catch (err) {
    process.stderr.write(`ringfence-egress-proxy: ${(err as Error).message}\n`);
    return EXIT.usage;
  }
  if (cli.help) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.stopped;
  }
  const args: SidecarArgs = cli;
  if (args.lifeline) {
    const problem = lifelineProblem();
    if (problem) {
      process.stderr.write(
        `ringfence-egress-proxy: --lifeline needs standard input held open by the parent process, but ${problem}; ` +
          'start it with a pipe on stdin (docker run -i / attach stdin), or drop --lifeline\n',
      );
      return EXIT.usage;
    }
  }
  let proxy: Awaited<ReturnType<typeof startEgressProxy>>;
  try {
    proxy = await startEgressProxy({
      host: args.listen.host,
      port: args.listen.port,
      allow: args.allow,
      allowAddresses: args.allowAddresses,
      resolve: args.resolve,
      dnsServers: args.dnsServers,
      maxTunnels: args.maxTunnels,
      idleTimeoutSec: args.idleTimeoutSec,
      connectTimeoutMs: args.connectTimeoutMs,
      headerTimeoutMs: args.headerTimeoutMs,
      dnsTimeoutMs: args.dnsTimeoutMs,
      onNotice: say,
    });
  } catch (err) {
    const code = err instanceof EgressProxyError ? err.code : 'EGRESS_LISTEN_FAILED';
    process.stderr.write(`ringfence-egress-proxy: ${(err as Error).message} (${code})\n`);
    return EXIT.failure;
  }
  // Last line of defence: an exception no handler caught costs the request it came from, not
  // every open tunnel (the process keeps serving and says what happened on stderr).
  process.on('uncaughtException', (err) => {
    process.stderr.write(
      `${JSON.stringify({ event: 'internal-error', message: String((err as Error)?.message ?? err) })}\n`,
    );
  });
  process.stderr.write(formatListeningLine({ address: proxy.address, port: proxy.port }));
  return await new Promise<number>((resolve) => {
    const stop = (why: string, code: number) => {
      say({ event: 'stopping', reason: why });
      void proxy.close();
      resolve(code);
    };
    if (args.lifeline) {
      process.stdin.on('data', () => {});
      process.stdin.once('end', () => stop('lifeline-ended', EXIT.stopped));
      process.stdin.once('error', () => stop('lifeline-error', EXIT.stopped));
      process.stdin.resume();
    }
    process.once('SIGTERM', () => stop('SIGTERM', EXIT.stopped));
    process.once('SIGINT', () => stop('SIGINT', EXIT.stopped));
  });
}
