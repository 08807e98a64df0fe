import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';

/**
 * One command started in a running sandbox as an engine `exec`: argv (no shell), no TTY, no
 * stdin, its stdout and stderr attached as the engine's multiplexed stream. `sandbox_run` reads
 * that stream until the command ends; `sandbox_exec` reads it in the background.
 */
export async function openExec(
  container: Docker.Container,
  command: readonly string[],
  workdir?: string,
): Promise<{ exec: Docker.Exec; stream: Duplex }> {
  const exec = await container.exec({
    Cmd: [...command],
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    ...(workdir ? { WorkingDir: workdir } : {}),
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  return { exec, stream };
}
