/**
 * What a server lists and the gateway pins. Each kind is fingerprinted, pinned, reviewed and
 * withheld the same way; only where it is stored and how people read its name differ.
 */
export type DefinitionKind = 'tool' | 'prompt' | 'resource' | 'template';

export const DEFINITION_KINDS: readonly DefinitionKind[] = ['tool', 'prompt', 'resource', 'template'];

/**
 * Where a kind lives in a server's record of `mcp-pins.json`. Tools keep the keys of the first
 * version of the file, so a tools-only file reads and writes exactly as before; every other kind
 * has keys of its own, present only when something is stored under them.
 */
export const KIND_KEYS = {
  tool: { pinned: 'tools', pending: 'pending' },
  prompt: { pinned: 'prompts', pending: 'pending_prompts' },
  resource: { pinned: 'resources', pending: 'pending_resources' },
  template: { pinned: 'templates', pending: 'pending_templates' },
} as const satisfies Record<DefinitionKind, { pinned: string; pending: string }>;

/**
 * The member that names a definition of each kind, and so keys its pin: a resource is known by
 * its URI and a template by its URI template (names of either may repeat; their URIs may not).
 */
export const KIND_ID = {
  tool: 'name',
  prompt: 'name',
  resource: 'uri',
  template: 'uriTemplate',
} as const satisfies Record<DefinitionKind, string>;

/** `docs/search` for a tool, `docs/prompt greet` for a prompt: how people read a definition's name. */
export function definitionLabel(server: string, kind: DefinitionKind, name: string): string {
  return kind === 'tool' ? `${server}/${name}` : `${server}/${kind} ${name}`;
}
