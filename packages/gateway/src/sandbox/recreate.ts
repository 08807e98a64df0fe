import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { removeContainer } from '../runtime/engine-races.js';
import { SandboxError } from './errors.js';
import { SAVED_LABEL } from './saved.js';

const blankSavedLabels: Record<string, string> = Object.fromEntries(
  [SAVED_LABEL.checkpoint, SAVED_LABEL.note, SAVED_LABEL.snapshot, SAVED_LABEL.home].map((key) => [key, '']),
);

/**
 * The create options of a container exactly as it was made, from its own inspect, with another
 * image: the same user, command, environment, labels and host config (capabilities, no new
 * privileges, limits, ulimits, tmpfs, mounts, and the network mode, so a sandbox with no network
 * still has none and one behind its sidecar is still on its internal network only).
 */
export function sameSpecFrom(
  info: Docker.ContainerInspectInfo,
  image: string,
): Docker.ContainerCreateOptions {
  const config = info.Config;
  return {
    name: info.Name.replace(/^\//, ''),
    Image: image,
    User: config.User,
    Env: config.Env ?? [],
    ...(config.Cmd ? { Cmd: config.Cmd } : {}),
    ...(config.Entrypoint ? { Entrypoint: config.Entrypoint as string[] } : {}),
    ...(config.WorkingDir ? { WorkingDir: config.WorkingDir } : {}),
    // The image's own labels (a checkpoint's) would be the container's too: blanked, so the
    // sandbox's labels say what they said before.
    Labels: { ...blankSavedLabels, ...config.Labels },
    // A sandbox with no network is made with networking disabled, not only in network mode none.
    NetworkDisabled: (config as { NetworkDisabled?: boolean }).NetworkDisabled === true,
    Tty: false,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    OpenStdin: false,
    StdinOnce: false,
    HostConfig: info.HostConfig,
  };
}

/**
 * Replace a container by one made from `image` with its very settings, under its very name. The
 * old one is stopped first (its processes end before the new one starts) and steps aside,
 * renamed, until the new one runs, so a failure leaves the sandbox as it was, stopped files and
 * all. `removing` is the old one's removal, begun and not awaited: the caller decides who waits.
 */
export async function recreateFrom(
  docker: Docker,
  containerId: string,
  image: string,
): Promise<{ id: string; removing: Promise<unknown> }> {
  const old = docker.getContainer(containerId);
  const info = await old.inspect();
  const spec = sameSpecFrom(info, image);
  await old.kill().catch((error: { statusCode?: number }) => {
    // 409: it was not running (its files are all there is to put back).
    if (error.statusCode !== 409) throw error;
  });
  await old.rename({ name: `${spec.name}-rewinding-${randomBytes(3).toString('hex')}` });
  let made: Docker.Container | undefined;
  try {
    made = await docker.createContainer(spec);
    await made.start();
  } catch (error) {
    if (made) await removeContainer(made).catch(() => {});
    await old.rename({ name: spec.name! }).catch(() => {});
    await old.start().catch(() => {});
    throw new SandboxError(
      'SANDBOX_RUN',
      `rewinding failed, the sandbox is as it was: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return { id: made.id, removing: removeContainer(old) };
}
