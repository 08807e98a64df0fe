import { createSocket, type Socket } from 'node:dgram';
import { parseIp } from '../contract/ip.js';

export interface DnsRecords {
  a?: string[];
  aaaa?: string[];
  /** Never answer this name (to exercise the resolver timeout). */
  silent?: boolean;
  /** Answer after this many milliseconds. */
  delayMs?: number;
}

/** A tiny authoritative DNS responder on 127.0.0.1, so no test ever asks a real resolver. */
export class TestDns {
  readonly records = new Map<string, DnsRecords>();
  readonly queries: string[] = [];
  private socket: Socket | undefined;
  port = 0;

  async start(): Promise<this> {
    const socket = createSocket('udp4');
    this.socket = socket;
    socket.on('message', (msg, rinfo) => {
      const reply = this.answer(msg);
      const delay = this.delayFor(msg);
      if (reply) setTimeout(() => socket.send(reply, rinfo.port, rinfo.address), delay);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    this.port = socket.address().port;
    return this;
  }

  get server(): string {
    return `127.0.0.1:${this.port}`;
  }

  stop(): void {
    this.socket?.close();
  }

  private delayFor(msg: Buffer): number {
    const labels: string[] = [];
    let off = 12;
    while (off < msg.length && msg[off] !== 0) {
      const len = msg[off] ?? 0;
      labels.push(msg.subarray(off + 1, off + 1 + len).toString('latin1'));
      off += len + 1;
    }
    return this.records.get(labels.join('.').toLowerCase())?.delayMs ?? 0;
  }

  private answer(msg: Buffer): Buffer | null {
    if (msg.length < 17) return null;
    let off = 12;
    const labels: string[] = [];
    while (off < msg.length && msg[off] !== 0) {
      const len = msg[off] ?? 0;
      labels.push(msg.subarray(off + 1, off + 1 + len).toString('latin1'));
      off += len + 1;
    }
    const qEnd = off + 5;
    const qtype = msg.readUInt16BE(off + 1);
    const name = labels.join('.').toLowerCase();
    this.queries.push(`${name}/${qtype === 28 ? 'AAAA' : qtype === 1 ? 'A' : qtype}`);
    const rec = this.records.get(name);
    if (rec?.silent) return null;
    const values = qtype === 1 ? (rec?.a ?? []) : qtype === 28 ? (rec?.aaaa ?? []) : [];
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(rec ? 0x8580 : 0x8583, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(values.length, 6);
    const answers = values.map((v) => {
      const ip = parseIp(v);
      const rdata = Buffer.from(ip?.bytes ?? []);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(qtype, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(5, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    return Buffer.concat([header, msg.subarray(12, qEnd), ...answers]);
  }
}
