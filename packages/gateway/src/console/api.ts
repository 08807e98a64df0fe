/**
 * What the console's page receives from its JSON endpoints. Types only, shared by the server
 * (console/*.ts) and the page (console-web/), which imports nothing else from the gateway.
 * Every string in them has passed renderUntrusted on the server.
 */

/** Rendered text and how many characters in it are shown escaped. */
export interface ShownText {
  readonly text: string;
  readonly escaped: number;
}

export interface ServerView {
  readonly name: ShownText;
  readonly kind: 'container' | 'remote';
  /** The image, or the URL through text/redact.ts (headers and env values are never shown). */
  readonly target: ShownText;
  readonly egress: ShownText;
  readonly mounts: readonly ShownText[];
  readonly state: ShownText;
  readonly exposed: readonly ShownText[];
  readonly withheld: readonly ShownText[];
  readonly pinned: number;
  readonly ceilings: readonly ShownText[];
}

export interface ReviewSide {
  readonly digest?: string;
  readonly description: ShownText;
  /** Everything but the description, as indented JSON. */
  readonly rest: ShownText;
}

export interface ReviewView {
  readonly server: ShownText;
  /** `tool`, `prompt`, or any kind pins/kinds.ts adds. */
  readonly definition: string;
  readonly name: ShownText;
  readonly change: 'changed' | 'new';
  readonly before?: ReviewSide;
  readonly after: ReviewSide;
  readonly movedFields: readonly ShownText[];
  /** Exactly what to type at a terminal to see this and approve it there. */
  readonly commands: readonly string[];
}

export interface PolicyPanel {
  readonly state: 'none' | 'verified' | 'refused';
  readonly summary: ShownText;
  readonly lines: readonly ShownText[];
}

export interface Overview {
  readonly home: ShownText;
  readonly gateway: ShownText;
  readonly servers: readonly ServerView[];
  readonly reviews: readonly ReviewView[];
  readonly policy: PolicyPanel;
}

/** One entry as the page receives it: every string already rendered (docs/untrusted-text.md). */
export interface ShownEntry {
  /** Position in the feed (1 = the first line the console read), for the page's `after`. */
  readonly n: number;
  readonly seq?: number;
  readonly ts?: string;
  readonly type: string;
  readonly session?: string;
  readonly agent?: string;
  readonly scope?: string;
  readonly server?: string;
  /** The tool's name, or `prompt NAME` for another kind. */
  readonly subject?: string;
  readonly phase?: string;
  /** `allowed` or `refused` for decisions and egress; `ok` or `error` for results. */
  readonly outcome?: string;
  readonly rule?: string;
  readonly reason?: string;
  readonly host?: string;
  readonly port?: number;
  /** Attempts this egress entry stands for. */
  readonly count?: number;
  readonly parent?: number;
  /** The whole line, as indented JSON. */
  readonly json: string;
}

export interface ExposedByServer {
  readonly exposed: string[];
  readonly withheld: { name: string; rule: string; reason?: string }[];
}

/** The last `gateway.start` the console has seen and what that gateway decided to expose. */
export interface GatewayRun {
  readonly pid: number;
  readonly session: string;
  readonly ts: string;
  readonly alive: boolean;
  readonly exposure: ReadonlyMap<string, ExposedByServer>;
}

export interface ChainStatus {
  readonly ok: boolean;
  readonly entries?: number;
  readonly lastHash?: string;
  readonly line?: number;
  readonly code?: string;
  readonly message: string;
}

/** `/api/entries?after=N`: the entries after feed position N, and where the feed is. */
export interface EntriesPage {
  readonly entries: ShownEntry[];
  /** The feed position of the newest entry read. */
  readonly last: number;
  /** The log was replaced or cut short, or following it stopped: what happened, rendered. */
  readonly notice?: string;
}
