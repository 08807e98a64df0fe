/**
 * What a server lists (or, for its instructions, says when it starts) and the gateway pins. Each
 * kind is fingerprinted, pinned, reviewed and withheld the same way; only where it is stored and
 * how people read its name differ.
 */
export type DefinitionKind = 'tool' | 'prompt' | 'resource' | 'template' | 'instructions';

export const DEFINITION_KINDS: readonly DefinitionKind[] = [
  'tool',
  'prompt',
  'resource',
  'template',
  'instructions',
];

/**
 * A server has one text of instructions (its `initialize` or `server/discover` answer's
 * `instructions`): it is pinned under this one name, as the definition `{instructions: TEXT}`.
 */
export const INSTRUCTIONS_NAME = 'instructions';

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
  instructions: { pinned: 'instructions', pending: 'pending_instructions' },
} as const satisfies Record<DefinitionKind, { pinned: string; pending: string }>;

/**
 * The member that names a definition of each kind, and so keys its pin: a resource is known by
 * its URI and a template by its URI template (names of either may repeat; their URIs may not).
 * Instructions have no such member: there is one text per server (`INSTRUCTIONS_NAME`).
 */
export const KIND_ID = {
  tool: 'name',
  prompt: 'name',
  resource: 'uri',
  template: 'uriTemplate',
} as const satisfies Record<Exclude<DefinitionKind, 'instructions'>, string>;

/** The member a person reads as prose, shown line by line in a review: a description, or the instructions. */
export const textMember = (kind: DefinitionKind): 'description' | 'instructions' =>
  kind === 'instructions' ? 'instructions' : 'description';

/**
 * `docs/search` for a tool, `docs/prompt greet` for a prompt, `docs/instructions` for a server's
 * instructions: how people read a definition's name.
 */
export function definitionLabel(server: string, kind: DefinitionKind, name: string): string {
  if (kind === 'instructions') return `${server}/instructions`;
  return kind === 'tool' ? `${server}/${name}` : `${server}/${kind} ${name}`;
}
