import type Docker from 'dockerode';
import { listContainers } from '../runtime/engine-races.js';
import { isPersistent, LABEL } from '../runtime/labels.js';
import { removeManaged } from '../runtime/sweep.js';
import { SandboxError } from './errors.js';
import { splitLog } from './lifecycle.js';
import { isSandboxObject, managedFilter } from './persistence.js';

/** A sandbox as the person at the terminal sees it (`ringfence sandbox ls`): any session's. */
export interface PersonSandbox {
  readonly name: string;
  readonly session: string;
  readonly image: string;
  readonly state: string;
  readonly network: string;
  readonly container: string;
  /** Made to outlive its gateway: stays until removed (`ringfence sandbox rm`). */
  readonly persistent: boolean;
}

// No `ringfence.managed=1` pre-filter: a persistent sandbox is `ringfence.managed=persistent`
// (isSandboxObject reads either).
const sandboxFilter = (name?: string) => ({
  label: [`${LABEL.role}=sandbox`, name === undefined ? LABEL.sandbox : `${LABEL.sandbox}=${name}`],
});

/** Every container labelled as an assistant's sandbox, whichever gateway made it. */
export async function listAllSandboxes(docker: Docker, name?: string): Promise<PersonSandbox[]> {
  const found = await listContainers(docker, { all: true, filters: sandboxFilter(name) });
  return found
    .filter((c) => isSandboxObject(c.Labels))
    .map((c) => ({
      name: c.Labels[LABEL.sandbox]!,
      session: c.Labels[LABEL.session] ?? '',
      image: c.Labels['ringfence.sandbox_image'] ?? c.Image,
      state: c.State,
      network: c.Labels['ringfence.sandbox_network'] ?? 'none',
      container: c.Names?.[0]?.replace(/^\//, '') ?? c.Id,
      persistent: isPersistent(c.Labels),
    }));
}

/** The one sandbox of that name (of `session` when given), or a refusal saying how to choose. */
async function chooseSandbox(docker: Docker, name: string, session?: string): Promise<PersonSandbox> {
  const matches = (await listAllSandboxes(docker, name)).filter(
    (s) => session === undefined || s.session === session,
  );
  if (matches.length === 0)
    throw new SandboxError(
      'SANDBOX_UNKNOWN',
      `no sandbox "${name}"${session ? ` in session ${session}` : ''}. See them with: ringfence sandbox ls`,
    );
  const sessions = [...new Set(matches.map((s) => s.session))];
  if (sessions.length > 1)
    throw new SandboxError(
      'SANDBOX_EXISTS',
      `sandboxes named "${name}" exist in ${sessions.length} sessions (${sessions.join(', ')}); name one with --session.`,
    );
  return matches[0]!;
}

/**
 * The main process's output of one sandbox (any session's), for the person at the terminal:
 * the last `tail` lines of each stream, as the engine keeps them. Raw bytes: the caller renders
 * them (the sandbox's output is the assistant's, not the person's).
 */
export async function sandboxLogs(
  docker: Docker,
  name: string,
  options: { session?: string; tail: number },
): Promise<{ sandbox: PersonSandbox; stdout: Buffer; stderr: Buffer }> {
  const sandbox = await chooseSandbox(docker, name, options.session);
  const raw = (await docker.getContainer(sandbox.container).logs({
    follow: false,
    stdout: true,
    stderr: true,
    tail: options.tail,
  })) as unknown as Buffer;
  const { stdout, stderr } = splitLog(
    Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)),
    PERSON_LOG_BYTES,
  );
  return { sandbox, stdout: stdout.bytes(), stderr: stderr.bytes() };
}

/** What `ringfence sandbox logs` shows at most of each stream (the engine keeps 2 MiB in all). */
const PERSON_LOG_BYTES = 4 * 1024 * 1024;

/**
 * Remove one sandbox (its container, sidecar, networks and committed images): only objects labelled
 * `ringfence.managed=1` (or `persistent`) and `ringfence.sandbox=NAME` (of `session` when given). A name two
 * sessions use needs the session, so one person's command cannot remove the wrong one.
 */
export async function removeSandbox(
  docker: Docker,
  name: string,
  session?: string,
): Promise<{ containers: string[]; networks: string[]; images: string[] }> {
  const found = await chooseSandbox(docker, name, session);
  const chosen = found.session;
  const report = await removeManaged(
    docker,
    (labels) =>
      isSandboxObject(labels) && labels?.[LABEL.sandbox] === name && labels[LABEL.session] === chosen,
    [managedFilter(found.persistent), `${LABEL.sandbox}=${name}`, `${LABEL.session}=${chosen}`],
  );
  if (report.errors.length > 0)
    throw new SandboxError(
      'SANDBOX_RUN',
      `removing the sandbox "${name}" failed: ${report.errors.join('; ')}`,
    );
  return { containers: report.containers, networks: report.networks, images: report.images };
}
