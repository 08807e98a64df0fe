import { ExportError } from './errors.js';
import type { ExportFraming } from './target.js';

/**
 * RFC 5424 facility 13 ("log audit"). Severity 4 (warning) for a refusal or a failure, 5 (notice)
 * for everything else; anchors are notices.
 */
const FACILITY = 13;
const BOM = '\u{feff}';

/** PRINTUSASCII without spaces, at most `max` characters (RFC 5424 header fields); "-" when empty. */
function headerField(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '').slice(0, max);
  return clean === '' ? '-' : clean;
}

export interface SyslogHeader {
  /** RFC 3339 time of the record (the entry's own `ts`; the send time for an anchor). */
  readonly ts: string;
  readonly host: string;
  /** The record type: the entry's `type`, or `ringfence.anchor`. */
  readonly msgid: string;
  readonly warning: boolean;
}

/**
 * One RFC 5424 message: `<PRI>1 TIMESTAMP HOSTNAME ringfence - MSGID - BOM MSG`, MSG being the
 * record's JSON (UTF-8, announced by the BOM). No structured data: the JSON carries everything.
 */
export function syslogMessage(header: SyslogHeader, body: string): string {
  const pri = FACILITY * 8 + (header.warning ? 4 : 5);
  return `<${pri}>1 ${headerField(header.ts, 64)} ${headerField(header.host, 255)} ringfence - ${headerField(header.msgid, 32)} - ${BOM}${body}`;
}

/**
 * The bytes of one record on the wire. syslog: RFC 6587 octet counting (`LEN SP MSG`), so no
 * content can end a message early or start a forged one; JSON lines: the JSON and `\n` (JSON
 * text holds no raw newline).
 */
export function frame(framing: ExportFraming, header: SyslogHeader, body: string): Buffer {
  if (framing === 'jsonl') return Buffer.from(`${body}\n`, 'utf8');
  const message = Buffer.from(syslogMessage(header, body), 'utf8');
  return Buffer.concat([Buffer.from(`${message.length} `, 'ascii'), message]);
}

/**
 * Splits an octet-counted stream back into messages (for tests and receivers written in Node).
 * Returns the complete messages and the bytes left over; refuses a length that is not digits.
 */
export function splitOctetCounted(data: Buffer): { messages: Buffer[]; rest: Buffer } {
  const messages: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const digits = data.subarray(at, space).toString('ascii');
    if (!/^[1-9][0-9]{0,8}$/.test(digits))
      throw new ExportError('EXPORT_FRAMING', `bad octet count "${digits.slice(0, 16)}"`);
    const length = Number(digits);
    if (space + 1 + length > data.length) break;
    messages.push(data.subarray(space + 1, space + 1 + length));
    at = space + 1 + length;
  }
  return { messages, rest: data.subarray(at) };
}
