/**
 * The reaper process (started by `startReaper` in reaper.ts, one per gateway): waits for its
 * stdin, a pipe held only by the gateway, to end, then removes what that gateway still owns and
 * exits. stderr is RINGFENCE_HOME/logs/reaper.log; stdout carries only the `ready` line.
 */
import { createDockerClient, resolveEngineEndpoint } from './engine.js';
import { parseOwnerArgs, READY_LINE, REAP_PASS_DELAYS_MS, reapOnce } from './reaper.js';

const owner = parseOwnerArgs(process.argv.slice(2));
const log = (line: string) =>
  process.stderr.write(
    `${new Date().toISOString()} reaper of gateway pid ${owner.pid} (session ${owner.session}): ${line}\n`,
  );
const docker = createDockerClient(resolveEngineEndpoint(process.env));

let reaping: Promise<void> | undefined;
function reap(): Promise<void> {
  reaping ??= (async () => {
    const removed = { containers: new Set<string>(), networks: new Set<string>() };
    for (const delay of [0, ...REAP_PASS_DELAYS_MS]) {
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        const report = await reapOnce(docker, owner);
        for (const name of report.containers) removed.containers.add(name);
        for (const name of report.networks) removed.networks.add(name);
        for (const problem of report.errors) log(`could not remove ${problem}`);
      } catch (error) {
        log(`could not reach the engine: ${(error as Error).message}`);
      }
    }
    // A clean exit leaves nothing to remove, and nothing to say.
    if (removed.containers.size + removed.networks.size > 0) {
      log(
        `the gateway ended without removing its objects; removed containers [${[...removed.containers].join(', ')}] and networks [${[...removed.networks].join(', ')}]`,
      );
    }
    process.exit(0);
  })();
  return reaping;
}

// Listen before anything else, so an end that comes while the engine is being asked is not missed.
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
process.stdin.resume();

try {
  await docker.ping();
  process.stdout.write(`${READY_LINE}\n`);
} catch (error) {
  log(`could not reach the engine, so nothing would be removed: ${(error as Error).message}`);
  process.exit(1);
}
