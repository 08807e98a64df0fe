/** Names the model may see: the MCP limit of 128 characters and a conservative alphabet. */
export const EXPOSED_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * How the gateway names what it exposes. Serving every server, each name is prefixed with its
 * server (`SERVER_NAME`) so two servers cannot shadow each other; serving one server
 * (`mcp serve --only`), names are the server's own, as they were before ringfence.
 */
export interface Naming {
  readonly prefixed: boolean;
}

export const PREFIXED: Naming = { prefixed: true };

export function exposedName(server: string, name: string, naming: Naming = PREFIXED): string {
  return naming.prefixed ? `${server}_${name}` : name;
}

export function descriptionPrefix(server: string, destination: string): string {
  return `[${server} via ringfence ${destination}] `;
}

function prefixedDescription(
  server: string,
  destination: string,
  definition: Readonly<Record<string, unknown>>,
) {
  const description = typeof definition.description === 'string' ? definition.description : '';
  return `${descriptionPrefix(server, destination)}${description}`;
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
  naming: Naming = PREFIXED,
): Record<string, unknown> {
  const annotations =
    typeof definition.annotations === 'object' &&
    definition.annotations !== null &&
    !Array.isArray(definition.annotations)
      ? (definition.annotations as Record<string, unknown>)
      : {};
  return {
    ...definition,
    name: exposedName(server, String(definition.name), naming),
    description: prefixedDescription(server, destination, definition),
    annotations: { ...annotations, readOnlyHint: readOnly, destructiveHint: !readOnly },
  };
}

/** The prompt as the client sees it: exactly the pinned definition, renamed, with our prefix. */
export function presentPrompt(
  server: string,
  destination: string,
  definition: Readonly<Record<string, unknown>>,
  naming: Naming = PREFIXED,
): Record<string, unknown> {
  return {
    ...definition,
    name: exposedName(server, String(definition.name), naming),
    description: prefixedDescription(server, destination, definition),
  };
}

/**
 * A resource or template as the client sees it: exactly the pinned definition, its URI (or URI
 * template) the one the client reads it by (`uri`), its name renamed like a prompt's, with our
 * prefix on the description.
 */
export function presentResource(
  server: string,
  destination: string,
  definition: Readonly<Record<string, unknown>>,
  kind: 'resource' | 'template',
  uri: string,
  naming: Naming = PREFIXED,
): Record<string, unknown> {
  return {
    ...definition,
    [kind === 'resource' ? 'uri' : 'uriTemplate']: uri,
    name: exposedName(server, String(definition.name), naming),
    description: prefixedDescription(server, destination, definition),
  };
}
