import { RingfenceError } from '@ringfence/policy/errors';

export type SandboxErrorCode =
  /** The tool's arguments are not what its schema says (checked again here, after the pipeline). */
  | 'SANDBOX_ARGUMENTS'
  /** No sandbox of this gateway has that name (or it was made by someone else: never touched). */
  | 'SANDBOX_UNKNOWN'
  | 'SANDBOX_EXISTS'
  /** The image is not one `mcp serve --sandbox-image` names, is not here, or the policy refuses it. */
  | 'SANDBOX_IMAGE'
  /** The network asked for is more than the policy grants, or cannot be contained here. */
  | 'SANDBOX_EGRESS'
  | 'SANDBOX_MOUNT'
  /** A persistent sandbox where the person did not allow them, or with hosts. */
  | 'SANDBOX_PERSISTENT'
  /** No container engine answers. */
  | 'SANDBOX_ENGINE'
  | 'SANDBOX_RUN'
  /** A path in a sandbox that is not there, or may not be written (a read-only mount). */
  | 'SANDBOX_PATH'
  /** The engine's archive of a sandbox's files is not a tar this reader takes. */
  | 'SANDBOX_ARCHIVE'

  /** A checkpoint or snapshot would take more than `mcp serve --sandbox-save-cap` allows. */
  | 'SANDBOX_SAVE_CAP';

/** A refusal or failure of one of ringfence's own tools: its message says what to do next. */
export class SandboxError extends RingfenceError<SandboxErrorCode> {}
