/**
 * The reaper process (started by `startReaper` in reaper.ts, one per gateway): waits for its
 * stdin, a pipe held only by the gateway, to end, then removes what that gateway still owns and
 * exits. stderr is RINGFENCE_HOME/logs/reaper.log; stdout carries only the `ready` line.
 */
import { request as httpRequest } from 'node:http';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { type EngineEndpoint, resolveEngineEndpoint } from './engine-endpoint.js';
import { parseOwnerArgs, READY_LINE, REAP_PASS_DELAYS_MS, reapOnce } from './reaper.js';

const owner = parseOwnerArgs(process.argv.slice(2));
const log = (line: string) =>
  process.stderr.write(
    `${new Date().toISOString()} reaper of gateway pid ${owner.pid} (session ${owner.session}): ${line}\n`,
  );
const endpoint = resolveEngineEndpoint(process.env);
/** When dockerode is loaded if no reap asked for it first: after the gateway's start-up. */
const WARM_AFTER_MS = 5000;
// dockerode (most of this process's start) is loaded once the first ping answered, not before
// it: the gateway creates no container before this process said it reaches the engine, and
// reaping needs dockerode only once the gateway is gone (or it is loaded then).
let engine: Promise<Docker> | undefined;
const dockerClient = (): Promise<Docker> => {
  engine ??= import('./engine.js').then(({ createDockerClient }) => createDockerClient(endpoint));
  return engine;
};

let reaping: Promise<void> | undefined;
function reap(): Promise<void> {
  reaping ??= (async () => {
    const removed = { containers: new Set<string>(), networks: new Set<string>() };
    for (const delay of [0, ...REAP_PASS_DELAYS_MS]) {
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        const report = await reapOnce(await dockerClient(), owner);
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
  await ping(endpoint);
  process.stdout.write(`${READY_LINE}\n`);
  // Loaded once the gateway's start-up is over (not beside it, on the cores it needs), so that a
  // reap later does not wait for it; a reap before then loads it itself.
  setTimeout(() => {
    dockerClient().catch((error: unknown) =>
      log(`could not load the engine client: ${(error as Error).message}`),
    );
  }, WARM_AFTER_MS).unref();
} catch (error) {
  log(`could not reach the engine, so nothing would be removed: ${(error as Error).message}`);
  process.exit(1);
}

/**
 * The engine's `GET /_ping` (what dockerode's `ping` asks), over a unix socket or plain TCP with
 * node:http alone; over TLS (whose certificates docker-modem reads from the environment) through
 * dockerode itself.
 */
async function ping(at: EngineEndpoint): Promise<void> {
  const options = at.options as Docker.DockerOptions;
  if (!options.socketPath && options.protocol !== 'http') {
    await (await dockerClient()).ping();
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      {
        method: 'GET',
        path: '/_ping',
        ...(options.socketPath
          ? { socketPath: options.socketPath }
          : { host: options.host, port: options.port }),
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve()
            : reject(
                new GatewayError(
                  'ENGINE_UNREACHABLE',
                  `the engine answered its ping with HTTP ${res.statusCode}`,
                ),
              ),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
