import { hostIdentity, processStartTime } from './process-identity.js';

export const LABEL = {
  managed: 'ringfence.managed',
  server: 'ringfence.server',
  session: 'ringfence.session',
  pid: 'ringfence.pid',
  pidStart: 'ringfence.pid_start',
  role: 'ringfence.role',
  host: 'ringfence.host',
} as const;

const HOST = hostIdentity();

/** Labels naming this gateway process as the owner of an object. */
export function ownerLabels(
  server: string,
  session: string,
  role: 'server' | 'sidecar' | 'network',
): Record<string, string> {
  return {
    [LABEL.managed]: '1',
    [LABEL.server]: server,
    [LABEL.session]: session,
    [LABEL.pid]: String(process.pid),
    [LABEL.pidStart]: processStartTime(process.pid) ?? '',
    [LABEL.role]: role,
    [LABEL.host]: HOST,
  };
}

export const containerName = (server: string, session: string) => `ringfence-mcp-${server}-${session}`;
export const sidecarName = (server: string, session: string) => `ringfence-egress-${server}-${session}`;
export const networkName = (server: string, session: string, kind: 'in' | 'out' | 'any') =>
  `ringfence-mcp-${server}-${session}-${kind}`;
