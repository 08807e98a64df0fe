/**
 * A server's instructions in its catalog: fingerprinted with what it lists (so they are pinned,
 * withheld and reviewed like its tools), and, once approved, kept as the text a client may be
 * given (`instructions.ts` renders and labels it).
 */
import { fingerprintInstructions, type PinnableDefinition } from '../pins/fingerprint.js';
import { INSTRUCTIONS_NAME } from '../pins/kinds.js';
import type { WithheldEntry } from './withheld.js';

/** A server's instructions, pinned and approved. `text` is exactly the pinned text. */
export interface InstructionsEntry {
  readonly kind: 'instructions';
  /** `SERVER/instructions`: never a name a client calls, only how the entry is keyed. */
  readonly exposedName: string;
  readonly server: string;
  readonly digest: string;
  readonly text: string;
}

/**
 * Add the instructions a server gave (untrusted; undefined or empty: none) to what it listed,
 * or, when they cannot be pinned, to what is withheld.
 */
export function listInstructions(
  server: string,
  given: unknown,
  listed: PinnableDefinition[],
  withheld: WithheldEntry[],
): void {
  if (given === undefined || given === '') return;
  const result = fingerprintInstructions(given);
  if (result.ok) listed.push(result.pinnable);
  else
    withheld.push({
      server,
      tool: INSTRUCTIONS_NAME,
      definition: 'instructions',
      reason: result.reason,
      kind: 'unpinnable',
    });
}

/** The approved instructions among what reconciling exposed, if any. */
export function approvedInstructions(
  server: string,
  exposed: readonly PinnableDefinition[],
): InstructionsEntry | undefined {
  const pinned = exposed.find((item) => item.kind === 'instructions');
  return (
    pinned && {
      kind: 'instructions',
      exposedName: `${server}/${INSTRUCTIONS_NAME}`,
      server,
      digest: pinned.digest,
      text: String(pinned.definition.instructions),
    }
  );
}

/** A definition the catalog checks and lists (everything but instructions, which are text). */
export const isListedDefinition = (item: PinnableDefinition): boolean => item.kind !== 'instructions';
