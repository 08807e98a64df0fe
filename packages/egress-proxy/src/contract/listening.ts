import { parseJsonObjectLine } from './decision.js';

/**
 * The proxy says it is ready with one JSON line on stderr whose `event` is this; the gateway
 * waits for that line before it starts the server the sidecar guards.
 */
export const LISTENING_EVENT = 'listening';

export interface ListeningLine {
  readonly address: string;
  readonly port: number;
}

/** The readiness line, newline included. */
export function formatListeningLine(listening: ListeningLine, ts: string = new Date().toISOString()): string {
  return `${JSON.stringify({ ts, event: LISTENING_EVENT, address: listening.address, port: listening.port })}\n`;
}

/** The address and port from a readiness line, or `undefined` for any other line. */
export function parseListeningLine(line: string): ListeningLine | undefined {
  const v = parseJsonObjectLine(line, 4096);
  if (v === undefined || v.get('event') !== LISTENING_EVENT) return undefined;
  const address = v.get('address');
  const port = v.get('port');
  if (
    typeof address !== 'string' ||
    !Number.isInteger(port) ||
    (port as number) < 1 ||
    (port as number) > 65535
  )
    return undefined;
  return { address, port: port as number };
}

export function isListeningLine(line: string): boolean {
  return parseListeningLine(line) !== undefined;
}
