import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';

export interface AttachedStreams {
  /** Write here to reach the container's stdin; end() closes it. */
  readonly stdin: NodeJS.WritableStream;
  readonly stdout: PassThrough;
  readonly stderr: PassThrough;
}

/** Attach to a created (not yet started) container's stdio, with stdout/stderr demultiplexed. */
export async function attachStdio(docker: Docker, container: Docker.Container): Promise<AttachedStreams> {
  const stream = (await container.attach({
    stream: true,
    stdin: true,
    stdout: true,
    stderr: true,
    hijack: true,
  })) as NodeJS.ReadWriteStream;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  docker.modem.demuxStream(stream, stdout, stderr);
  const finish = () => {
    stdout.end();
    stderr.end();
  };
  stream.once('end', finish);
  stream.once('close', finish);
  stream.on('error', finish);
  return { stdin: stream, stdout, stderr };
}

export async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true, v: true });
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    // 404: already gone; 409: removal already in progress.
    if (status !== 404 && status !== 409) throw error;
  }
}
