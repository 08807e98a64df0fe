import type Docker from 'dockerode';
import { type ContainerServerConfig, ServerStore } from '../config/servers.js';
import { parseNpmRequest } from '../images/npm-fetch.js';
import { RegistrationError } from './errors.js';
import { checkRegistrationAgainstPolicy, type RegistrationPolicy } from './policy.js';
import { buildNpmImage } from './register.js';

export interface PullOptions {
  readonly home: string;
  readonly policy: RegistrationPolicy;
  readonly engine: () => Promise<Docker>;
  /** Where the package of an image built from npm is installed now. */
  readonly from: string;
  /** Told before a registry pull starts (it can take a while). */
  readonly onPull?: (image: string) => void;
}

export interface PullResult {
  readonly server: ContainerServerConfig;
  /** The image ID recorded before. */
  readonly previousId: string;
}

function pull(docker: Docker, ref: string): Promise<void> {
  const failed = (error: Error) =>
    new RegistrationError('REGISTRATION_PULL_FAILED', `Pulling ${ref} failed: ${error.message}`, {
      cause: error,
    });
  return new Promise((resolve, reject) => {
    docker.pull(ref, (error: Error | null, stream: NodeJS.ReadableStream) => {
      if (error) return reject(failed(error));
      docker.modem.followProgress(stream, (failure: Error | null) =>
        failure ? reject(failed(failure)) : resolve(),
      );
    });
  });
}

/**
 * `ringfence mcp pull`: the only way ringfence pulls. An image built from an npm package is
 * rebuilt from the package installed under `from` instead. The new image ID is recorded only if
 * the organisation policy still allows the image; its tools are compared with the pins at the
 * next start.
 */
export async function pullServer(name: string, options: PullOptions): Promise<PullResult> {
  const store = new ServerStore(options.home);
  const server = await store.get(name);
  if (server.transport !== 'container') {
    throw new RegistrationError(
      'REGISTRATION_NOT_CONTAINED',
      `${name} is a remote server; there is nothing to pull.`,
    );
  }
  const docker = await options.engine();
  const current = await docker
    .getImage(server.image)
    .inspect()
    .catch(() => undefined);
  const npmPackage = current?.Config?.Labels?.['ringfence.npm-package'];
  let image = server.image;
  if (npmPackage) {
    image = (
      await buildNpmImage(docker, parseNpmRequest(npmPackage), { from: options.from, home: options.home })
    ).ref;
  } else {
    options.onPull?.(server.image);
    await pull(docker, server.image);
  }
  const info = await docker.getImage(image).inspect();
  const updated = { ...server, image, image_id: info.Id };
  checkRegistrationAgainstPolicy(options.policy, updated, info);
  await store.replace(updated);
  return { server: updated, previousId: server.image_id };
}

/** What `mcp pull` prints once the image ID is recorded. */
export function pullSummary(result: PullResult): string {
  const { server, previousId } = result;
  return server.image_id === previousId
    ? `${server.name}: ${server.image} is unchanged (${server.image_id.slice(0, 19)}).`
    : `${server.name}: recorded ${server.image} as ${server.image_id.slice(0, 19)} (was ${previousId.slice(0, 19)}). Its tools are compared with the pins at the next start.`;
}
