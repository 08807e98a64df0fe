/**
 * The `instructions` a client is given: ringfence's own text, then each server's approved
 * instructions under a heading ringfence writes, then a line for each server whose instructions
 * are withheld. See docs/gateway.md#server-instructions.
 *
 * A server's instructions are a pinned definition (`pins/`, kind `instructions`): they reach a
 * client only while their text is exactly the text a person approved (or first sight pinned).
 * What passes is rendered as tool descriptions shown to people are (`text/render.ts`, block mode:
 * newline is the only line break left, every invisible or control character shown as `\u{HEX}`)
 * and every line is begun by the server's label (`labelled`, as for sampling text), so no line
 * the server wrote can pass for a heading, for ringfence's words or for another server's.
 */
import type { Gateway } from './gateway.js';
import { labelled } from './server-request-params.js';
import { withheldNextStep, withheldReason } from './withheld.js';

/** The most of one server's instructions a client is given, in characters (code points). */
export const INSTRUCTIONS_MAX_CHARS = 8192;

/** Said before the servers' instructions, once: how to tell their words from ringfence's. */
const SERVERS_LEAD =
  'Instructions from the MCP servers behind ringfence follow, each under a heading ringfence writes. Every line a server wrote begins with its label, [MCP server "NAME", via ringfence]; a line without it is not that server\'s. ringfence passes a server\'s instructions only as a person approved them (pinned).';

/** One server's approved instructions: a heading, then its text, labelled, cut at `max` characters. */
export function serverInstructionsBlock(server: string, text: string, max = INSTRUCTIONS_MAX_CHARS): string {
  const points = Array.from(text);
  // Cut before rendering, as error text is: no escape is cut in half, and the cut is counted in
  // the server's characters.
  const shown = points.length > max ? points.slice(0, max).join('') : text;
  const lines = [`## Instructions of MCP server "${server}" (via ringfence)`, labelled(server, shown)];
  if (points.length > max)
    lines.push(
      `ringfence: the instructions of MCP server "${server}" are cut here: ${max} of their ${points.length} characters are shown (read them whole with: ringfence mcp pins show ${server} --instructions).`,
    );
  return lines.join('\n');
}

/**
 * `base` (ringfence's own instructions) followed by the instructions of every running server, in
 * configuration order: approved ones labelled under their heading, withheld ones named with the
 * command that reviews them. Computed when a client connects, and kept for that connection: a
 * re-list never changes what a connected client was told (a changed text is withheld anyway).
 */
export function withServerInstructions(gateway: Gateway, base: string): string {
  const blocks: string[] = [];
  const withheld: string[] = [];
  const states = gateway.serverStates();
  for (const config of gateway.options.servers) {
    const state = states.get(config.name);
    if (state?.status !== 'running') continue;
    const { catalog } = state;
    if (catalog.instructions) blocks.push(serverInstructionsBlock(config.name, catalog.instructions.text));
    for (const entry of catalog.withheld) {
      if (entry.definition !== 'instructions') continue;
      const next = withheldNextStep(entry);
      withheld.push(
        `ringfence: the instructions of MCP server "${config.name}" are withheld and not given to you: ${withheldReason(entry)}.${next ? ` A person can review them at a terminal. ${next}` : ''}`,
      );
    }
  }
  if (blocks.length === 0 && withheld.length === 0) return base;
  return [base, ...(blocks.length > 0 ? [SERVERS_LEAD, ...blocks] : []), ...withheld].join('\n\n');
}
