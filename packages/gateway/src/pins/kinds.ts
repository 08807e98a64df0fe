/**
 * What a server lists and the gateway pins. Each kind is fingerprinted, pinned, reviewed and
 * withheld the same way; only where it is stored and how people read its name differ.
 */
export type DefinitionKind = 'tool' | 'prompt';

export const DEFINITION_KINDS: readonly DefinitionKind[] = ['tool', 'prompt'];

/**
 * Where a kind lives in a server's record of `mcp-pins.json`. Tools keep the keys of the first
 * version of the file, so a tools-only file reads and writes exactly as before; every other kind
 * has keys of its own, present only when something is stored under them.
 */
export const KIND_KEYS = {
  tool: { pinned: 'tools', pending: 'pending' },
  prompt: { pinned: 'prompts', pending: 'pending_prompts' },
} as const satisfies Record<DefinitionKind, { pinned: string; pending: string }>;

/** `docs/search` for a tool, `docs/prompt greet` for a prompt: how people read a definition's name. */
export function definitionLabel(server: string, kind: DefinitionKind, name: string): string {
  return kind === 'tool' ? `${server}/${name}` : `${server}/${kind} ${name}`;
}
