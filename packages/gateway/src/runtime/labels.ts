import { hostIdentity, processStartTime } from './process-identity.js';

export const LABEL = {
  managed: 'ringfence.managed',
  server: 'ringfence.server',
  session: 'ringfence.session',
  pid: 'ringfence.pid',
  pidStart: 'ringfence.pid_start',
  role: 'ringfence.role',
  host: 'ringfence.host',
  /** On a sandbox the assistant made (`sandbox/`), its container, sidecar and networks: the sandbox's name. */
  sandbox: 'ringfence.sandbox',
  /**
   * `1` on every object of a persistent sandbox (`sandbox/persistence.ts`): made to outlive its
   * gateway, so the reaper, the sweep and a gateway's close leave it; only its removal by name
   * (`sandbox_delete`, `ringfence sandbox rm`) takes it.
   */
  persistent: 'ringfence.persistent',
  /** On a persistent sandbox: the owner id of the ringfence home whose gateways may use it. */
  home: 'ringfence.home',
} as const;

/**
 * `ringfence.managed` of a persistent sandbox's objects, instead of `1`: the reaper and sweep of
 * every ringfence version select `ringfence.managed=1` only, so even a gateway older than
 * persistent sandboxes, sweeping the same engine, never takes one for a dead gateway's leftover.
 */
export const MANAGED_PERSISTENT = 'persistent';

/** Whether an object's labels say it is meant to outlive its gateway (never removed by the reaper or sweep). */
export const isPersistent = (labels: Record<string, string> | undefined): boolean =>
  labels?.[LABEL.persistent] === '1';

const HOST = hostIdentity();

/** The gateway process that owns an object, exactly as its labels name it. */
export interface Owner {
  readonly session: string;
  readonly pid: number;
  /** Empty where /proc does not tell start times. */
  readonly pidStart: string;
  readonly host: string;
}

/** This process as the owner of what it creates for `session`. */
export function currentOwner(session: string): Owner {
  return { session, pid: process.pid, pidStart: processStartTime(process.pid) ?? '', host: HOST };
}

/** Whether an object's labels name exactly this owner (session, pid, its start time and host). */
export function ownedBy(labels: Record<string, string> | undefined, owner: Owner): boolean {
  return (
    labels?.[LABEL.managed] === '1' &&
    labels[LABEL.session] === owner.session &&
    labels[LABEL.pid] === String(owner.pid) &&
    (labels[LABEL.pidStart] ?? '') === owner.pidStart &&
    labels[LABEL.host] === owner.host
  );
}

/** Labels naming this gateway process as the owner of an object. */
export function ownerLabels(
  server: string,
  session: string,
  role: 'server' | 'sidecar' | 'network' | 'probe' | 'sandbox',
): Record<string, string> {
  const owner = currentOwner(session);
  return {
    [LABEL.managed]: '1',
    [LABEL.server]: server,
    [LABEL.session]: session,
    [LABEL.pid]: String(owner.pid),
    [LABEL.pidStart]: owner.pidStart,
    [LABEL.role]: role,
    [LABEL.host]: owner.host,
  };
}

export const containerName = (server: string, session: string) => `ringfence-mcp-${server}-${session}`;
export const sidecarName = (server: string, session: string) => `ringfence-egress-${server}-${session}`;
export const networkName = (server: string, session: string, kind: 'in' | 'out' | 'any') =>
  `ringfence-mcp-${server}-${session}-${kind}`;
