/** Names the model may see: the MCP limit of 128 characters and a conservative alphabet. */
export const EXPOSED_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export function exposedToolName(server: string, tool: string): string {
  return `${server}_${tool}`;
}

export function descriptionPrefix(server: string, destination: string): string {
  return `[${server} via ringfence ${destination}] `;
}

/**
 * The tool as the client sees it: exactly the pinned definition, renamed, with our prefix on
 * the description and our annotations. A server's own read-only/destructive hints are not
 * trusted: only the organisation policy can mark a tool read-only.
 */
export function presentTool(
  server: string,
  destination: string,
  definition: Readonly<Record<string, unknown>>,
  readOnly: boolean,
): Record<string, unknown> {
  const description = typeof definition.description === 'string' ? definition.description : '';
  const annotations =
    typeof definition.annotations === 'object' &&
    definition.annotations !== null &&
    !Array.isArray(definition.annotations)
      ? (definition.annotations as Record<string, unknown>)
      : {};
  return {
    ...definition,
    name: exposedToolName(server, String(definition.name)),
    description: `${descriptionPrefix(server, destination)}${description}`,
    annotations: { ...annotations, readOnlyHint: readOnly, destructiveHint: !readOnly },
  };
}
