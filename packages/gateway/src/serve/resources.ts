import type { Naming } from '../catalog/present.js';
import { renderJsonText } from '../text/render.js';
import type { ResourceEntry, ServerCatalog, TemplateEntry } from './catalog.js';
import type { ResourceTarget } from './pipeline/index.js';
import { clientUri, compileTemplate, serverUri, templateMatches, URI_MAX } from './resource-uri.js';
import { type WithheldEntry, withheldNextStep, withheldReason } from './withheld.js';

/** The most URIs per server a client may follow from results; the oldest are forgotten first. */
export const MAX_LINKED_PER_SERVER = 10_000;

const key = (server: string, uri: string) => `${server}\u0000${uri}`;

export type Resolved =
  | { readonly pass: true; readonly target: ResourceTarget }
  | { readonly pass: false; readonly what: string };

/**
 * Which URIs the client may read, and from which server. A read goes to exactly one server: the
 * one the URI names (`resource-uri.ts`), and only when that server listed that very URI, or one
 * of its exposed (pinned) templates matches it, or it put that URI in a result the gateway passed
 * on (a link, an embedded resource, a read). Nothing else is forwarded, so a server can neither
 * answer for another's URI nor have the client read a URI it never offered.
 */
/** Text quoted as a JSON string, every character a person could not see shown as `\u{HEX}`. */
const quotedRendered = (text: string): string => renderJsonText(JSON.stringify(text)).text;

export class ResourceIndex {
  private resources = new Map<string, ResourceEntry>();
  private templates: TemplateEntry[] = [];
  /** Withheld resources by server and URI, and withheld templates with what they match. */
  private withheldResources = new Map<string, WithheldEntry>();
  private withheldTemplates: { entry: WithheldEntry; matcher: ReturnType<typeof compileTemplate> }[] = [];
  private readonly linked = new Map<string, Set<string>>();

  /** `only`: the one server of `--only` (URIs are then that server's own). */
  constructor(
    private readonly naming: Naming,
    private readonly only?: string,
  ) {}

  /**
   * The exposed resources and templates of the servers in service, in config order; true when
   * what the client is shown changed.
   */
  rebuild(catalogs: readonly ServerCatalog[]): boolean {
    const resources = new Map<string, ResourceEntry>();
    for (const entry of catalogs.flatMap((c) => c.resources))
      resources.set(key(entry.server, entry.uri), entry);
    const templates = catalogs.flatMap((c) => c.templates);
    const digests = (entries: readonly { digest: string; exposedName: string }[]) =>
      entries.map((e) => `${e.exposedName}\u0000${e.digest}`).join('\u0001');
    const changed =
      digests([...resources.values()]) !== digests([...this.resources.values()]) ||
      digests(templates) !== digests(this.templates);
    this.resources = resources;
    this.templates = templates;
    const withheld = catalogs.flatMap((c) => c.withheld);
    this.withheldResources = new Map(
      withheld.filter((w) => w.definition === 'resource').map((w) => [key(w.server, w.tool), w]),
    );
    this.withheldTemplates = withheld
      .filter((w) => w.definition === 'template')
      .map((entry) => ({ entry, matcher: compileTemplate(entry.tool) }));
    return changed;
  }

  listResources(): Record<string, unknown>[] {
    return [...this.resources.values()].map((e) => e.presented);
  }

  listTemplates(): Record<string, unknown>[] {
    return this.templates.map((e) => e.presented);
  }

  /** The exposed template the client names by its URI template (for completions). */
  template(exposedUriTemplate: string): TemplateEntry | undefined {
    return this.templates.find((t) => t.exposedName === exposedUriTemplate);
  }

  /**
   * The URI the client is shown for `uri`, a URI `server` put in a result; with `follow` it may
   * now be read from that server.
   */
  link(server: string, uri: string, follow = true): string {
    if (follow && uri.length <= URI_MAX) {
      const seen = this.linked.get(server) ?? new Set<string>();
      this.linked.set(server, seen);
      seen.delete(uri);
      seen.add(uri);
      if (seen.size > MAX_LINKED_PER_SERVER) seen.delete(seen.values().next().value as string);
    }
    return clientUri(server, uri, this.naming);
  }

  /** The URI the client is shown for a URI of `server`. */
  clientUri(server: string, uri: string): string {
    return clientUri(server, uri, this.naming);
  }

  /** The URI a client's readable URI is shown as (one per server URI), or undefined when it is not readable. */
  shown(uri: string): string | undefined {
    const resolved = this.resolve(uri);
    return resolved.pass ? this.clientUri(resolved.target.server, resolved.target.uri) : undefined;
  }

  /** The server and server URI a client's URI names, readable or not (to undo a subscription). */
  named(uri: string): { server: string; uri: string } | undefined {
    return uri.length <= URI_MAX ? serverUri(uri, this.only) : undefined;
  }

  /**
   * Whether `server` may be asked for its URI `own`: listed and exposed, or matched by an exposed
   * template, passes; else a withheld resource or template (pending review, changed, malformed…)
   * refuses it, even when the server put it in a result the gateway passed on (a link does not
   * approve what a review has not); else a linked URI passes; else it is unknown.
   */
  private check(server: string, own: string): 'pass' | 'unknown' | WithheldEntry {
    if (this.resources.has(key(server, own))) return 'pass';
    const resource = this.withheldResources.get(key(server, own));
    if (resource) return resource;
    if (this.templates.some((t) => t.server === server && templateMatches(t.matcher, own))) return 'pass';
    const template = this.withheldTemplates.find(
      (t) => t.entry.server === server && templateMatches(t.matcher, own),
    );
    if (template) return template.entry;
    return this.linked.get(server)?.has(own) === true ? 'pass' : 'unknown';
  }

  /** Whether `server`'s URI `own` is withheld now (a subscription to it then gets no more updates). */
  withheld(server: string, own: string): boolean {
    const found = this.check(server, own);
    return found !== 'pass' && found !== 'unknown';
  }

  /** The one server and URI a client's URI may be read from, or why it is refused (nothing was forwarded). */
  resolve(uri: string): Resolved {
    // Partly the server's words (a URI it wrote into a link, which the client followed): quoted as
    // JSON, every hidden character rendered (`renderJsonText`, as a whole definition's JSON is).
    const shown = quotedRendered(uri.length > 200 ? `${uri.slice(0, 200)}…` : uri);
    const named = uri.length <= URI_MAX ? serverUri(uri, this.only) : undefined;
    if (!named) {
      return {
        pass: false,
        what: `${shown} is not a URI this gateway serves (${this.only === undefined ? 'its resources read as ringfence:SERVER/URI, exactly as resources/list shows them' : 'use a URI exactly as resources/list shows it'}); it was not forwarded.`,
      };
    }
    const { server, uri: own } = named;
    const found = this.check(server, own);
    if (found !== 'pass' && found !== 'unknown') {
      const next = withheldNextStep(found);
      return {
        pass: false,
        what: `${shown} is withheld: it is ${found.definition === 'template' ? `a URI of the withheld template ${quotedRendered(found.tool)}` : 'a withheld resource'} of ${server} (${withheldReason(found)}), so it is not read or subscribed even when a result of ${server} links to it; it was not forwarded.${next ? ` ${next}` : ''} (ringfence mcp pins show ${server} shows every pending definition whole.)`,
      };
    }
    if (found === 'unknown') {
      return {
        pass: false,
        what: `${shown} is not a resource ${server} listed, does not match a template of ${server} the gateway exposes, and was not in a result of ${server}; it was not forwarded. See what can be read with resources/list and resources/templates/list (a withheld one is shown by: ringfence mcp pins diff ${server}).`,
      };
    }
    return { pass: true, target: { kind: 'resource', server, uri: own, exposedName: uri } };
  }
}
