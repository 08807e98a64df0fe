import type Docker from 'dockerode';
import { listContainers } from '../runtime/engine-races.js';
import { LABEL } from '../runtime/labels.js';
import { removeManaged } from '../runtime/sweep.js';
import { SandboxError } from './errors.js';

/** A sandbox as the person at the terminal sees it (`ringfence sandbox ls`): any session's. */
export interface PersonSandbox {
  readonly name: string;
  readonly session: string;
  readonly image: string;
  readonly state: string;
  readonly network: string;
  readonly container: string;
}

const sandboxFilter = (name?: string) => ({
  label: [
    `${LABEL.managed}=1`,
    `${LABEL.role}=sandbox`,
    name === undefined ? LABEL.sandbox : `${LABEL.sandbox}=${name}`,
  ],
});

/** Every container labelled as an assistant's sandbox, whichever gateway made it. */
export async function listAllSandboxes(docker: Docker, name?: string): Promise<PersonSandbox[]> {
  const found = await listContainers(docker, { all: true, filters: sandboxFilter(name) });
  return found
    .filter((c) => c.Labels?.[LABEL.sandbox] !== undefined)
    .map((c) => ({
      name: c.Labels[LABEL.sandbox]!,
      session: c.Labels[LABEL.session] ?? '',
      image: c.Labels['ringfence.sandbox_image'] ?? c.Image,
      state: c.State,
      network: c.Labels['ringfence.sandbox_network'] ?? 'none',
      container: c.Names?.[0]?.replace(/^\//, '') ?? c.Id,
    }));
}

/**
 * Remove one sandbox (its container, sidecar, networks and checkpoints): only objects labelled
 * `ringfence.managed=1` and `ringfence.sandbox=NAME` (of `session` when given). A name two
 * sessions use needs the session, so one person's command cannot remove the wrong one.
 */
export async function removeSandbox(
  docker: Docker,
  name: string,
  session?: string,
): Promise<{ containers: string[]; networks: string[]; images: string[] }> {
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
  const chosen = sessions[0]!;
  const report = await removeManaged(
    docker,
    (labels) => labels?.[LABEL.sandbox] === name && labels[LABEL.session] === chosen,
    [`${LABEL.sandbox}=${name}`, `${LABEL.session}=${chosen}`],
  );
  if (report.errors.length > 0)
    throw new SandboxError(
      'SANDBOX_RUN',
      `removing the sandbox "${name}" failed: ${report.errors.join('; ')}`,
    );
  return { containers: report.containers, networks: report.networks, images: report.images };
}
