import { connect, type Socket } from 'node:net';
import type { AddressPolicy } from '../address/policy.js';
import { canonicalIp } from '../contract/ip.js';
import { DownstreamReader } from './downstream.js';

export type DialOutcome =
  | {
      readonly ok: true;
      readonly socket: Socket;
      readonly address: string;
      /** Reads the socket (see downstream.ts); the relay attaches the client to it. */
      readonly reader: DownstreamReader;
    }
  | { readonly ok: false; readonly reason: string; readonly status: number; readonly address?: string };

/**
 * Verifies that a connected socket reached the address we vetted, and that the peer itself
 * still passes the policy. Cheap insurance against anything between us and the kernel (a
 * transparent redirect, an unexpected family mapping) changing the destination.
 */
export function peerProblem(
  socket: Socket,
  expected: string,
  port: number,
  policy: AddressPolicy,
): string | null {
  const remote = socket.remoteAddress;
  // Dialling an IP string yields that same string in the common case; only differing spellings
  // need the byte-level comparison.
  if (!remote || (remote !== expected && canonicalIp(remote) !== canonicalIp(expected)))
    return 'peer-mismatch';
  const refused = policy.checkText(remote, port);
  return refused ? `forbidden-address:${refused}` : null;
}

/**
 * Dials the vetted addresses in order, each with its own connect timeout, and returns the first
 * socket whose peer checks out. Addresses are IP strings, so no resolution happens here.
 */
export async function dialVetted(
  addresses: readonly string[],
  port: number,
  timeoutMs: number,
  policy: AddressPolicy,
): Promise<DialOutcome> {
  if (addresses.length === 1) return dialOne(addresses[0] as string, port, timeoutMs, policy);
  let last: DialOutcome = { ok: false, reason: 'connect-failed', status: 502 };
  for (const address of addresses.slice(0, 4)) {
    last = await dialOne(address, port, timeoutMs, policy);
    if (last.ok || last.reason === 'peer-mismatch' || last.reason.startsWith('forbidden')) return last;
  }
  return last;
}

function dialOne(
  address: string,
  port: number,
  timeoutMs: number,
  policy: AddressPolicy,
): Promise<DialOutcome> {
  return new Promise((resolve) => {
    // allowHalfOpen: a tunnel must carry one direction after the other has ended.
    const reader = new DownstreamReader();
    const socket = connect({
      host: address,
      port,
      allowHalfOpen: true,
      noDelay: true,
      onread: reader.onread,
    });
    // The socket's own inactivity timer doubles as the connect timeout (one timer, not two).
    const onTimeout = () => {
      socket.destroy();
      resolve({ ok: false, reason: 'connect-timeout', status: 504, address });
    };
    socket.setTimeout(timeoutMs, onTimeout);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.off('timeout', onTimeout);
      const problem = peerProblem(socket, address, port, policy);
      if (problem) {
        socket.destroy();
        resolve({ ok: false, reason: problem, status: problem === 'peer-mismatch' ? 502 : 403, address });
        return;
      }
      resolve({ ok: true, socket, address, reader });
    });
    const onError = () => {
      socket.setTimeout(0);
      socket.destroy();
      resolve({ ok: false, reason: 'connect-failed', status: 502, address });
    };
    // Stays attached after connect: a later error destroys the socket (the relay tears down the
    // other side), and resolving twice is a no-op.
    socket.on('error', onError);
  });
}
