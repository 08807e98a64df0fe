/** `sha256:` + 64 lower-case hex digits. */
export type AuditDigest = `sha256:${string}`;

/** The `prev` of line 1: no line precedes it, so it names the hash of nothing, spelled as zeros. */
export const AUDIT_GENESIS: AuditDigest = `sha256:${'0'.repeat(64)}`;

/** File name of the log inside RINGFENCE_HOME. */
export const AUDIT_FILE_NAME = 'audit.jsonl';

/** The entry kinds this version writes and verifies. */
export const AUDIT_TYPES = [
  'gateway.start',
  'mcp.decision',
  'mcp.result',
  'mcp.egress',
  'mcp.server_request',
  'mcp.server_answer',
  'mcp.task',
  'mcp.oauth',
] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

/**
 * Strings from servers (tool names, hosts, reasons) are capped so one hostile name cannot bloat
 * every line; the writer shortens longer ones and the verifier refuses them.
 */
export const AUDIT_STRING_MAX = 1024;

/**
 * No entry this version writes comes near this (ten capped strings, fully escaped, are ~60 KiB);
 * a longer "line" means the file is not a log, and scanning on would only cost memory.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/** The organisation policy in force when a decision was taken. */
export interface AuditPolicyRef {
  readonly name: string;
  readonly digest: AuditDigest;
  /** keyid (hex) of the key whose signature was accepted. */
  readonly signer: string;
}

export interface StartRefs {
  readonly pid: number;
  /** ringfence version that wrote the entry. */
  readonly version?: string;
  readonly policy?: AuditPolicyRef;
}

/**
 * What a decision or result is about, when it is not a tool: `prompt` (exposing a prompt, or a
 * `prompts/get`), `resource`, `template`, `instructions` (exposing or withholding a server's
 * instructions; `tool` then holds `instructions`), or `log-level` (a `logging/setLevel` forwarded
 * to a server; `tool` then holds the level). Absent for tools, so tool entries keep the form older
 * versions wrote and read.
 */
export const AUDIT_SUBJECT_KINDS = ['prompt', 'resource', 'template', 'instructions', 'log-level'] as const;
export type AuditSubjectKind = (typeof AUDIT_SUBJECT_KINDS)[number];

/**
 * The client request a call decision or result is about, when it is not the one its kind implies
 * (`tools/call` for a tool, `prompts/get` for a prompt, `resources/read` for a resource): absent
 * for those, so their entries keep the form older versions wrote and read.
 */
export const AUDIT_METHODS = [
  'completion/complete',
  'resources/subscribe',
  'resources/unsubscribe',
  'logging/setLevel',
] as const;
export type AuditMethod = (typeof AUDIT_METHODS)[number];

/** What each method's entries are about: the `kind` an entry with that `method` must have. */
export const AUDIT_METHOD_KINDS: Readonly<Record<AuditMethod, readonly AuditSubjectKind[]>> = {
  'completion/complete': ['prompt', 'template'],
  'resources/subscribe': ['resource'],
  'resources/unsubscribe': ['resource'],
  'logging/setLevel': ['log-level'],
};

export interface DecisionRefs {
  /**
   * `expose`: a tool or prompt was listed to the client or withheld; `call`: a call (or prompt
   * request) was forwarded or refused.
   */
  readonly phase: 'expose' | 'call';
  readonly server: string;
  /** The tool's name, or with `kind` the prompt's, as the server lists it. */
  readonly tool: string;
  readonly kind?: AuditSubjectKind;
  /** Calls only: the request, when not the one `kind` implies (a completion, a subscription…). */
  readonly method?: AuditMethod;
  readonly allowed: boolean;
  /** The rule id that decided, or a built-in reason name such as `default_action`, `pinned` or `withheld-changed`. */
  readonly rule: string;
  /** Human text from the policy or the gateway. Never argument or result content. */
  readonly reason?: string;
  readonly policy?: AuditPolicyRef;
  /**
   * Calls only: digest of the canonical JSON of the arguments; `null` when they have no canonical
   * form (a lone surrogate), which is recorded rather than guessed at.
   */
  readonly arguments?: AuditDigest | null;
  /** Expose only: the fingerprint of the tool definition that was exposed or withheld. */
  readonly digest?: AuditDigest;
  /**
   * Calls only: the gateway task the allowed call runs as (a task-augmented `tools/call`); its
   * result entry names it too. Absent for a plain call (and in older logs).
   */
  readonly task?: string;
  /** Calls to one of ringfence's own tools (server `ringfence`): the sandbox it acts on, by name. */
  readonly sandbox?: string;
  /**
   * Calls only: the secrets the arguments carried (credentials/scan/), as `CLASS at PATH` items
   * joined by `; ` (a stored credential named by its id, a value split across siblings marked),
   * never a value; on a refusal, what refused it; on an allowed call, what the policy let go.
   */
  readonly secrets?: string;
  /** Calls only: the W3C trace id of the call (its span's, or the client's traceparent's). */
  readonly trace_id?: string;
}

export interface ResultRefs {
  readonly server: string;
  readonly tool: string;
  readonly kind?: AuditSubjectKind;
  readonly method?: AuditMethod;
  readonly is_error: boolean;
  /** Digest of the canonical JSON of the result, or `null` when it has no canonical form. */
  readonly result: AuditDigest | null;
  /** Why the result was not passed on (withheld by a check, or the upstream failed). */
  readonly reason?: string;
  /**
   * How many members and content items of the result the client did not receive as the server
   * sent them (`_meta`, unknown members, content its MCP version lacks, links made text).
   * Absent when nothing was dropped, and in entries written before it existed.
   */
  readonly dropped?: number;
  /**
   * Who cancelled the upstream request (`notifications/cancelled` was sent): the client, or the
   * gateway's timeout or ceiling. Absent when the call was not cancelled (and in older logs).
   */
  readonly cancelled?: 'client' | 'timeout';
  /** The gateway task whose result this is (written when its owner first fetched it). */
  readonly task?: string;
  /** As the decision's: the sandbox one of ringfence's own tools acted on. */
  readonly sandbox?: string;
  /** How many secrets were replaced by a marker before the client saw the result (absent: none). */
  readonly redacted?: number;
  /** Their classes, comma-separated (`aws,jwt`). */
  readonly redacted_classes?: string;
  /** The W3C trace id of the call, as in its decision entry. */
  readonly trace_id?: string;
}

/**
 * A client's request about a gateway task that is not a call: a `tasks/cancel` carried out, or a
 * `tasks/get|result|cancel` refused because the caller has no task of that id (unknown, expired,
 * or another principal's: all answered alike, all recorded).
 */
export interface TaskRefs {
  readonly op: 'get' | 'result' | 'cancel' | 'update';
  /** The task id as the client sent it (cut to what an entry holds). */
  readonly task: string;
  readonly allowed: boolean;
  readonly reason: string;
  /** The server and tool of the task, when the caller owns it. */
  readonly server?: string;
  readonly tool?: string;
}

/**
 * A remote server's OAuth token (remote-auth/holder.ts): sent for the first time by this process
 * (`used`), renewed at the token endpoint (`refreshed`; `previous` names the old one), or refused
 * by the server (401/403, `status`) or by a failed refresh (`refused`). Tokens are named by
 * `tokenDigest` (`sha256:` and 16 hex digits), never written.
 */
export interface OAuthRefs {
  readonly server: string;
  readonly event: 'used' | 'refreshed' | 'refused';
  readonly token?: string;
  readonly previous?: string;
  readonly status?: number;
  readonly reason?: string;
}

export interface EgressRefs {
  readonly server: string;
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  /** HTTP status the proxy answered with, when it reported one. */
  readonly status?: number;
  readonly reason: string;
  /** How many identical attempts this entry stands for, when repeats were folded into one. */
  readonly count?: number;
}

/** A request a server sent to the client (sampling, elicitation): passed on, or refused and why. */
export interface ServerRequestRefs {
  readonly server: string;
  /** `sampling/createMessage` or `elicitation/create`. */
  readonly method: string;
  readonly allowed: boolean;
  /**
   * What decided: `allowed`, or why not: `registration`, `policy`, `client-capability`,
   * `no-caller`, `several-callers`, `too-large`, `malformed`.
   */
  readonly rule: string;
  readonly reason?: string;
  /** Digest of the canonical JSON of the request's params as the server sent them. */
  readonly request: AuditDigest | null;
  readonly policy?: AuditPolicyRef;
}

/** The client's answer to a request passed on (`parent_seq` names the `mcp.server_request`). */
export interface ServerAnswerRefs {
  readonly server: string;
  readonly method: string;
  readonly is_error: boolean;
  /** Digest of the answer passed back to the server, or `null` when there was none (an error). */
  readonly answer: AuditDigest | null;
  readonly reason?: string;
}

interface EntryBase {
  readonly seq: number;
  /** ISO 8601 UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
  readonly ts: string;
  readonly session: string;
  readonly agent?: string;
  readonly scope?: string;
  /** The sandbox the assistant works in (`mcp serve --sandbox NAME`); absent without the flag. */
  readonly sandbox?: string;
  readonly prev: AuditDigest;
}

export type GatewayStartEntry = EntryBase & { readonly type: 'gateway.start'; readonly refs: StartRefs };
export type DecisionEntry = EntryBase & { readonly type: 'mcp.decision'; readonly refs: DecisionRefs };
export type ResultEntry = EntryBase & {
  readonly type: 'mcp.result';
  /** seq of the `mcp.decision` (phase `call`) this result answers. */
  readonly parent_seq: number;
  readonly refs: ResultRefs;
};
export type EgressEntry = EntryBase & { readonly type: 'mcp.egress'; readonly refs: EgressRefs };

export type ServerRequestEntry = EntryBase & {
  readonly type: 'mcp.server_request';
  readonly refs: ServerRequestRefs;
};
export type ServerAnswerEntry = EntryBase & {
  readonly type: 'mcp.server_answer';
  readonly parent_seq: number;
  readonly refs: ServerAnswerRefs;
};

export type TaskEntry = EntryBase & { readonly type: 'mcp.task'; readonly refs: TaskRefs };
export type OAuthEntryLine = EntryBase & { readonly type: 'mcp.oauth'; readonly refs: OAuthRefs };

/** One line of `audit.jsonl`, parsed and shape-checked. */
export type AuditEntry =
  | GatewayStartEntry
  | DecisionEntry
  | ResultEntry
  | EgressEntry
  | ServerRequestEntry
  | ServerAnswerEntry
  | TaskEntry
  | OAuthEntryLine;

/** Who acted, when the gateway knows (agents from `ringfence agent add`). */
export interface AuditActor {
  readonly agent?: string;
  readonly scope?: string;
  /** Overrides the log's session for this entry. */
  readonly session?: string;
}

/**
 * What callers hand to `AuditLog.append`. Arguments and results are passed as values and only
 * their digests are written, so no caller can store content by mistake.
 */
export type AuditInput =
  | (AuditActor & { readonly type: 'gateway.start'; readonly refs: StartRefs })
  | (AuditActor & {
      readonly type: 'mcp.decision';
      readonly refs: Omit<DecisionRefs, 'arguments' | 'phase'> & { readonly phase: 'expose' };
    })
  | (AuditActor & {
      readonly type: 'mcp.decision';
      readonly refs: Omit<DecisionRefs, 'arguments' | 'phase'> & {
        readonly phase: 'call';
        /** The raw arguments; only their digest is written. */
        readonly arguments: unknown;
      };
    })
  | (AuditActor & {
      readonly type: 'mcp.result';
      readonly parentSeq: number;
      readonly refs: Omit<ResultRefs, 'result'> & {
        /** The raw result; only its digest is written. */
        readonly result: unknown;
      };
    })
  | (AuditActor & { readonly type: 'mcp.egress'; readonly refs: EgressRefs })
  | (AuditActor & {
      readonly type: 'mcp.server_request';
      readonly refs: Omit<ServerRequestRefs, 'request'> & {
        /** The raw params; only their digest is written. */
        readonly request: unknown;
      };
    })
  | (AuditActor & {
      readonly type: 'mcp.server_answer';
      readonly parentSeq: number;
      readonly refs: Omit<ServerAnswerRefs, 'answer'> & {
        /** The raw answer (undefined: none); only its digest is written. */
        readonly answer: unknown;
      };
    })
  | (AuditActor & { readonly type: 'mcp.task'; readonly refs: TaskRefs })
  | (AuditActor & { readonly type: 'mcp.oauth'; readonly refs: OAuthRefs });
