import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { type BuiltImage, buildContextImage } from './build.js';
import type { ContextFile, ImageContext } from './context.js';

export const NODE_BASE_REPOSITORY = 'ringfence/node-base';

/** Where the CA bundle usually lives on Debian/Ubuntu, Fedora/RHEL and Alpine hosts. */
const CA_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/cert.pem',
];

/** uid/gid 65532 is the conventional "nonroot" user of distroless images; servers run as it. */
const PASSWD = 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n';
const GROUP = 'root:x:0:\nnonroot:x:65532:\n';
const NSSWITCH = 'hosts: files dns\npasswd: files\ngroup: files\n';

/**
 * Shared libraries named by `ldd` output, as absolute paths. `linux-vdso` has no file; a
 * "not found" library means the runtime cannot work in the image and is an error.
 */
export function parseLddOutput(output: string): string[] {
  const libraries: string[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('linux-vdso') || line.startsWith('linux-gate')) continue;
    if (/=>\s*not found/.test(line)) {
      throw new GatewayError('IMAGE_CONTEXT', `The Node runtime needs a library this host lacks: ${line}`);
    }
    if (/statically linked/.test(line)) continue;
    const mapped = /=>\s*(\/\S+)/.exec(line);
    const direct = /^(\/\S+)/.exec(line);
    const path = mapped?.[1] ?? direct?.[1];
    if (path) libraries.push(path);
  }
  return [...new Set(libraries)];
}

export interface NodeBaseInputs {
  /** Absolute path of the node binary (symlinks resolved). */
  readonly nodePath: string;
  /** `process.versions.node`. */
  readonly nodeVersion: string;
  /** Absolute library paths from `ldd`, including the dynamic loader. */
  readonly libraries: readonly string[];
  /** The host's CA bundle, when one exists (remote HTTPS from servers needs it). */
  readonly caBundle?: string;
  /** Resolve a library path to the file holding its bytes (symlinks followed). */
  readonly realpath?: (path: string) => string;
}

const strip = (absolute: string) => absolute.replace(/^\/+/, '');

/**
 * The context of a `FROM scratch` image holding only the Node runtime, the libraries it links
 * against (each copied, as a regular file, at the path the loader asks for), a CA bundle,
 * minimal /etc files and a world-writable /tmp. No shell, no package manager.
 */
export function planNodeBaseContext(inputs: NodeBaseInputs): ImageContext {
  const realpath = inputs.realpath ?? realpathSync;
  const files = new Map<string, ContextFile>();
  const addDir = (absolute: string, mode = 0o755) => {
    for (let dir = absolute; dir !== '/' && dir !== '.'; dir = dirname(dir)) {
      const path = `rootfs/${strip(dir)}/`;
      if (!files.has(path))
        files.set(path, { path, mode: dir === absolute ? mode : 0o755, source: { directory: true } });
    }
  };
  // Copied as a regular file (the link resolved) at the path the binary or loader asks for.
  const addHostFile = (absolute: string, mode: number, hostPath = absolute) => {
    addDir(dirname(absolute));
    const path = `rootfs/${strip(absolute)}`;
    files.set(path, { path, mode, source: { hostPath: realpath(hostPath) } });
  };
  const addText = (absolute: string, text: string) => {
    addDir(dirname(absolute));
    files.set(`rootfs/${strip(absolute)}`, {
      path: `rootfs/${strip(absolute)}`,
      mode: 0o644,
      source: { content: Buffer.from(text) },
    });
  };

  addHostFile('/usr/local/bin/node', 0o755, inputs.nodePath);
  for (const library of inputs.libraries) addHostFile(library, 0o755);
  if (inputs.caBundle) addHostFile('/etc/ssl/certs/ca-certificates.crt', 0o644, inputs.caBundle);
  addText('/etc/passwd', PASSWD);
  addText('/etc/group', GROUP);
  addText('/etc/nsswitch.conf', NSSWITCH);
  addDir('/tmp', 0o1777);

  const dockerfile = [
    'FROM scratch',
    'COPY rootfs/ /',
    'ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp NODE_ENV=production',
    `LABEL org.opencontainers.image.title="ringfence Node base" ringfence.node-version="${inputs.nodeVersion}"`,
    'WORKDIR /tmp',
    'CMD ["node"]',
    '',
  ].join('\n');
  return { dockerfile, files: [...files.values()] };
}

/** Collect the inputs from this machine: the running Node binary and what `ldd` says it needs. */
export async function discoverNodeBaseInputs(nodePath = process.execPath): Promise<NodeBaseInputs> {
  const resolved = realpathSync(nodePath);
  let output: string;
  try {
    ({ stdout: output } = await promisify(execFile)('ldd', [resolved], { timeout: 10_000 }));
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout ?? '';
    // A static binary makes ldd exit non-zero with "not a dynamic executable": nothing to copy.
    if (/not a dynamic executable|statically linked/.test(stdout + String(error))) output = '';
    else {
      throw new GatewayError(
        'IMAGE_CONTEXT',
        `Could not list the libraries of ${resolved} with ldd (${(error as Error).message}). Install ldd (package libc-bin) and run again.`,
      );
    }
  }
  const caBundle = CA_BUNDLES.find((path) => existsSync(path));
  return {
    nodePath: resolved,
    nodeVersion: process.versions.node,
    libraries: parseLddOutput(output),
    ...(caBundle ? { caBundle } : {}),
  };
}

/** Build (or find) the Node base image for the Node runtime running this process. */
export async function buildNodeBaseImage(
  docker: Docker,
  options: { onProgress?: (line: string) => void; inputs?: NodeBaseInputs } = {},
): Promise<BuiltImage> {
  const inputs = options.inputs ?? (await discoverNodeBaseInputs());
  return buildContextImage(docker, {
    repository: NODE_BASE_REPOSITORY,
    tagPrefix: inputs.nodeVersion,
    context: planNodeBaseContext(inputs),
    labels: { 'ringfence.image': 'node-base' },
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}
