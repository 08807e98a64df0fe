import type Docker from 'dockerode';
import { engineRefusal } from '../runtime/engine.js';
import { isPersistent, LABEL } from '../runtime/labels.js';
import { resolveMounts, verifyMounts, type WorkspaceRoot } from '../runtime/mounts.js';
import type { SharedEngine } from '../runtime/runtime.js';
import { type CreateRequest, parseCreate } from './args.js';
import { SandboxError } from './errors.js';
import { egressRuleOf } from './spec.js';
import { OWN_SERVER } from './tools.js';

/** What `recheck` needs of `Sandboxes` (kept apart so sandboxes.ts stays one concept). */
export interface RecheckContext {
  readonly images: readonly string[];
  readonly mountRoots: readonly WorkspaceRoot[];
  readonly homeDir: string;
  readonly persistentAllowed: boolean;
  readonly allowAddresses: readonly string[];
  readonly policy: {
    egressRefusal(server: string, rule: ReturnType<typeof egressRuleOf>): string | undefined;
  };
  checkedImage(engine: SharedEngine, image: string): Promise<unknown>;
}

const IMAGE_LABEL = 'ringfence.sandbox_image';
const REQUEST_LABEL = 'ringfence.sandbox_request';

const refused = (
  name: string,
  why: string,
  code: 'SANDBOX_PERSISTENT' | 'SANDBOX_IMAGE' | 'SANDBOX_EGRESS' | 'SANDBOX_MOUNT' = 'SANDBOX_PERSISTENT',
) =>
  new SandboxError(
    code,
    `the sandbox "${name}" is not used: ${why}. This gateway would not make it as it is now; delete it with sandbox_delete (or \`ringfence sandbox rm ${name}\`) and make one with sandbox_create.`,
  );

/** The create request a sandbox recorded (REQUEST_LABEL, IMAGE_LABEL), read again like any request. */
function recordedRequest(info: Docker.ContainerInspectInfo, name: string): CreateRequest {
  const labels = info.Config.Labels ?? {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(labels[REQUEST_LABEL] ?? '');
  } catch {
    parsed = undefined;
  }
  const image = labels[IMAGE_LABEL];
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || image === undefined)
    throw refused(name, 'it does not record how it was made (an older ringfence made it)');
  try {
    return parseCreate({ ...(parsed as Record<string, unknown>), name, image });
  } catch (error) {
    throw refused(
      name,
      `what it records is not a request this gateway accepts (${(error as Error).message})`,
    );
  }
}

const bindKey = (m: { source: string; target: string; readOnly: boolean }) =>
  `${m.source}\0${m.target}\0${m.readOnly ? 'ro' : 'rw'}`;

/** The container's bind mounts as made (HostConfig.Mounts), or as the engine reports them where it keeps no such list. */
function bindsOf(info: Docker.ContainerInspectInfo): { source: string; target: string; readOnly: boolean }[] {
  const made = info.HostConfig.Mounts;
  if (made && made.length > 0)
    return made
      .filter((m) => m.Type === 'bind')
      .map((m) => ({ source: m.Source, target: m.Target, readOnly: m.ReadOnly === true }));
  return (info.Mounts ?? [])
    .filter((m) => m.Type === 'bind')
    .map((m) => ({ source: m.Source, target: m.Destination, readOnly: !m.RW }));
}

/**
 * Before a sandbox's container is started again (sandbox_start, a rewind) or one an earlier gateway
 * made is used: would this gateway make it so now? Its image still allowed (`--sandbox-image`, the
 * policy), its network still granted (the policy, the engine, `--sandbox-persistent`), and each
 * bind mount exactly what its recorded request resolves to under today's `--allow-mount`
 * directories, nothing swapped for a link since: the engine resolves a bind's source again at every
 * start, so a folder replaced by a link (by another sandbox with that folder's parent mounted
 * writable) would otherwise be mounted wherever the link points.
 */
export async function recheck(
  context: RecheckContext,
  engine: SharedEngine,
  info: Docker.ContainerInspectInfo,
): Promise<void> {
  const labels = info.Config.Labels ?? {};
  const name = labels[LABEL.sandbox] ?? info.Name.replace(/^\//, '');
  const request = recordedRequest(info, name);
  if (isPersistent(labels) && !context.persistentAllowed)
    throw refused(name, 'it is persistent, and this gateway was started without --sandbox-persistent');
  if (!context.images.includes(request.image))
    throw refused(
      name,
      `its image ${request.image} is not one allowed now (--sandbox-image)`,
      'SANDBOX_IMAGE',
    );
  await context.checkedImage(engine, request.image);
  const rule = egressRuleOf(request, context.allowAddresses);
  const why =
    engineRefusal(engine.engine, rule.mode) ??
    context.policy.egressRefusal(OWN_SERVER, egressRuleOf(request));
  if (why) throw refused(name, `its network is not granted now (${why})`, 'SANDBOX_EGRESS');
  const binds = bindsOf(info);
  if (request.mounts.length === 0 && binds.length === 0) return;
  let resolved: ReturnType<typeof resolveMounts>;
  try {
    resolved = resolveMounts(request.mounts, context.mountRoots, context.homeDir);
    verifyMounts(resolved);
  } catch (error) {
    throw refused(name, `its mounts are not allowed now (${(error as Error).message})`, 'SANDBOX_MOUNT');
  }
  const want = resolved.map(bindKey).sort();
  const has = binds.map(bindKey).sort();
  if (want.length !== has.length || want.some((key, i) => key !== has[i]))
    throw refused(
      name,
      `its mounts (${binds.map((m) => `${m.source} at ${m.target}`).join(', ')}) are not what its request (${request.mounts.map((m) => m.path).join(', ')}) resolves to now: a folder may have been replaced by a link, or --allow-mount changed`,
      'SANDBOX_MOUNT',
    );
}
