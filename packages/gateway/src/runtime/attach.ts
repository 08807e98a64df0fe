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
  // Not container.attach(): dockerode sends its options as the request body too. Docker ignores
  // the body of an attach; Podman forwards it to the container's stdin, where it would precede
  // the first MCP message (`{"stream":true,…}{"jsonrpc":…}`) and break it. An empty body (sent
  // as a zero-length "file", so the request still goes out before the upgrade) suits both.
  const stream = await new Promise<NodeJS.ReadWriteStream>((resolve, reject) => {
    docker.modem.dial(
      {
        path: `/containers/${container.id}/attach?`,
        method: 'POST',
        isStream: true,
        hijack: true,
        openStdin: true,
        file: Buffer.alloc(0),
        statusCodes: { 101: true, 200: true, 404: 'no such container', 500: 'server error' },
        options: { stream: true, stdin: true, stdout: true, stderr: true },
      },
      (error, attached) => (error ? reject(error) : resolve(attached as NodeJS.ReadWriteStream)),
    );
  });
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
