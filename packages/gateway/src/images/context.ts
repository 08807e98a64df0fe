import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pack } from 'tar-stream';

/**
 * A build context described as data: what goes in, at which path, with which mode. Every image
 * ringfence builds (Node base, egress sidecar, npm servers) goes through this one description,
 * so the tag of an image is derived from exactly the bytes that were sent to the engine.
 */
export interface ContextFile {
  /** Path inside the build context, relative, with forward slashes. */
  readonly path: string;
  /** Unix permission bits (e.g. 0o755). */
  readonly mode: number;
  readonly source:
    | { readonly hostPath: string }
    | { readonly content: Buffer }
    | { readonly directory: true };
}

export interface ImageContext {
  readonly dockerfile: string;
  readonly files: readonly ContextFile[];
}

/** Fixed time stamp for every tar entry, so the layer bytes do not depend on when we built. */
const EPOCH = new Date(0);

function sortedFiles(context: ImageContext): ContextFile[] {
  return [...context.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function hashHostFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * `sha256:<hex>` over the Dockerfile and every file's path, mode and content hash, in path
 * order. Same inputs, same digest — this is what names the image.
 */
export async function contextDigest(context: ImageContext): Promise<string> {
  const lines: string[] = [`Dockerfile ${createHash('sha256').update(context.dockerfile).digest('hex')}`];
  for (const file of sortedFiles(context)) {
    let contentHash: string;
    if ('directory' in file.source) contentHash = 'dir';
    else if ('content' in file.source)
      contentHash = createHash('sha256').update(file.source.content).digest('hex');
    else contentHash = await hashHostFile(file.source.hostPath);
    lines.push(`${file.path} ${file.mode.toString(8)} ${contentHash}`);
  }
  return `sha256:${createHash('sha256').update(lines.join('\n')).digest('hex')}`;
}

/** A tar stream of the context, entries in path order, owned by root, with a fixed mtime. */
export function packContext(context: ImageContext): NodeJS.ReadableStream {
  const tar = pack();
  const header = { uid: 0, gid: 0, uname: 'root', gname: 'root', mtime: EPOCH };
  (async () => {
    tar.entry({ ...header, name: 'Dockerfile', mode: 0o644 }, context.dockerfile);
    for (const file of sortedFiles(context)) {
      if ('directory' in file.source) {
        tar.entry({ ...header, name: file.path, type: 'directory', mode: file.mode });
      } else if ('content' in file.source) {
        tar.entry({ ...header, name: file.path, mode: file.mode }, file.source.content);
      } else {
        const { hostPath } = file.source;
        const { size } = await stat(hostPath);
        await new Promise<void>((resolve, reject) => {
          const entry = tar.entry({ ...header, name: file.path, mode: file.mode, size }, (error) =>
            error ? reject(error) : resolve(),
          );
          createReadStream(hostPath).on('error', reject).pipe(entry);
        });
      }
    }
    tar.finalize();
  })().catch((error: unknown) => tar.destroy(error as Error));
  return tar as unknown as NodeJS.ReadableStream;
}
