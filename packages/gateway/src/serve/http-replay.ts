/**
 * The replay buffer of one `mcp serve --http` session (2025-era streamable HTTP): every SSE event
 * the session sends is numbered `<streamId>:<seq>` and kept here, so a client whose connection broke
 * can ask for what it missed with `Last-Event-ID` on a GET. Stream ids are 96 random bits and live in
 * the session's own map: an id from another session, a made-up one, or one never issued finds
 * nothing. The buffer is bounded by count and by bytes; the oldest events go first, and a resume
 * from before an evicted event is refused rather than answered with a gap.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** Events one session keeps for replay, across all its streams. */
export const REPLAY_MAX_EVENTS = 1024;
/** Bytes of events one session keeps for replay (an event larger than this is not kept). */
export const REPLAY_MAX_BYTES = 4 * 1024 * 1024;

/** One SSE stream of a session: a POST's answer, or the GET stream. */
export interface SseStream {
  readonly id: string;
  /** The number of the last event issued on it; the priming event is 0. */
  seq: number;
  /** Its events up to this number were dropped from the buffer. */
  evictedThrough: number;
  /** Its events still kept, oldest first. */
  readonly kept: KeptEvent[];
  /** The connection it is written to, while one is open. */
  res: ServerResponse | undefined;
  /** Its last event was issued (the answer's last response): nothing more comes. */
  done: boolean;
}

interface KeptEvent {
  readonly stream: SseStream;
  readonly seq: number;
  frame: string;
  readonly bytes: number;
  /** Released with its stream (delivered in full): skipped when the queue is walked. */
  dead: boolean;
}

/** Why a `Last-Event-ID` replays nothing: the HTTP status and what the client should do. */
export interface ReplayRefusal {
  readonly status: number;
  readonly message: string;
}

export class ReplayBuffer {
  private readonly streams = new Map<string, SseStream>();
  /** Every kept event of the session, oldest first (released ones marked dead until compacted). */
  private queue: KeptEvent[] = [];
  private events = 0;
  private bytes = 0;

  constructor(
    private readonly maxEvents = REPLAY_MAX_EVENTS,
    private readonly maxBytes = REPLAY_MAX_BYTES,
  ) {}

  /** A new stream, with an id no other stream of any session shares. */
  open(res: ServerResponse | undefined): SseStream {
    const stream: SseStream = {
      id: randomBytes(12).toString('base64url'),
      seq: 0,
      evictedThrough: 0,
      kept: [],
      res,
      done: false,
    };
    this.streams.set(stream.id, stream);
    return stream;
  }

  /** The priming event: an id and empty data, with the reconnection delay. */
  priming(stream: SseStream, retryMs: number): string {
    return `id: ${stream.id}:0\nretry: ${retryMs}\ndata: \n\n`;
  }

  /** Numbers the next event of a stream and keeps it; returns its SSE frame. */
  record(stream: SseStream, data: string): string {
    stream.seq += 1;
    const frame = `event: message\nid: ${stream.id}:${stream.seq}\ndata: ${data}\n\n`;
    const bytes = Buffer.byteLength(frame);
    if (bytes > this.maxBytes) {
      // Keeping it would push out every other event of the session: it is sent, not kept, and
      // the stream's earlier events go too (no resume from before it could be whole).
      for (const event of stream.kept) this.forget(event);
      stream.kept.length = 0;
      stream.evictedThrough = stream.seq;
      this.compact();
      return frame;
    }
    const event: KeptEvent = { stream, seq: stream.seq, frame, bytes, dead: false };
    stream.kept.push(event);
    this.queue.push(event);
    this.events += 1;
    this.bytes += bytes;
    this.evict();
    return frame;
  }

  /** Forgets a stream and its events: it was delivered in full, or replaced. */
  release(stream: SseStream): void {
    if (this.streams.get(stream.id) !== stream) return;
    this.streams.delete(stream.id);
    for (const event of stream.kept) this.forget(event);
    stream.kept.length = 0;
    this.compact();
  }

  /**
   * The stream a `Last-Event-ID` names and the events after it, or why none can be replayed.
   * Only this session's streams are searched.
   */
  resume(lastEventId: string): { stream: SseStream; frames: string[] } | ReplayRefusal {
    const cut = lastEventId.lastIndexOf(':');
    const number = lastEventId.slice(cut + 1);
    const stream =
      cut > 0 && /^\d{1,15}$/.test(number) ? this.streams.get(lastEventId.slice(0, cut)) : undefined;
    const seq = Number(number);
    if (!stream || seq > stream.seq)
      return {
        status: 400,
        message:
          'Bad Request: Last-Event-ID names no event of this session (it belongs to another session, was never sent, or its stream was delivered in full); nothing was replayed. Open a new GET stream without Last-Event-ID, or send the request again.',
      };
    if (seq < stream.evictedThrough)
      return {
        status: 410,
        message: `Gone: events after Last-Event-ID were dropped from this session's replay buffer (it keeps ${this.maxEvents} events or ${this.maxBytes} bytes); nothing was replayed. Send the request again.`,
      };
    return { stream, frames: stream.kept.filter((e) => e.seq > seq).map((e) => e.frame) };
  }

  /** Kept events and their bytes, across the session's streams. */
  size(): { events: number; bytes: number } {
    return { events: this.events, bytes: this.bytes };
  }

  clear(): void {
    this.streams.clear();
    this.queue = [];
    this.events = 0;
    this.bytes = 0;
  }

  /** Drops the oldest events until the buffer is within both bounds. */
  private evict(): void {
    let head = 0;
    while (this.events > this.maxEvents || this.bytes > this.maxBytes) {
      const event = this.queue[head++]!;
      if (event.dead) continue;
      // A stream's events are queued in order, so its oldest kept one is this one.
      const stream = event.stream;
      stream.kept.shift();
      stream.evictedThrough = event.seq;
      this.forget(event);
      // Finished, unread and now empty: nothing is left to resume.
      if (stream.done && !stream.res && stream.kept.length === 0) this.streams.delete(stream.id);
    }
    while (head < this.queue.length && this.queue[head]!.dead) head++;
    if (head > 0) this.queue.splice(0, head);
  }

  /** Released events leave holes in the queue; they are swept once they outnumber the bound. */
  private compact(): void {
    if (this.queue.length > 2 * this.maxEvents + 64) this.queue = this.queue.filter((e) => !e.dead);
  }

  private forget(event: KeptEvent): void {
    if (event.dead) return;
    event.dead = true;
    event.frame = '';
    this.events -= 1;
    this.bytes -= event.bytes;
  }
}
