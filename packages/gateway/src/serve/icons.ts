/**
 * Icons a server offers (`icons[]` of a tool, prompt, resource, template or resource link, MCP
 * 2025-11-25). A client draws an icon by fetching its `src` itself, not through the gateway: an
 * `https:` icon is a request from the person's machine to wherever the server chose, carrying
 * whatever the server put in the URL, past its container's egress sidecar (`egress deny` or not).
 * So an icon passes only when drawing it fetches nothing: a `data:` URI, base64, of a raster type
 * whose bytes start as that type does, within a size cap. SVG is refused too: an SVG image may
 * itself load other URLs. Everything else is dropped and counted. The raster types and their
 * signatures are `media.ts`'s, shared with image content.
 */

import { mediaProblem, RASTER_IMAGES } from './media.js';

/** The largest icon passed, decoded: an icon is a few KiB; a bigger one is not an icon. */
export const ICON_MAX_BYTES = 32 * 1024;
/** The most icons passed per definition or link; the rest are dropped. */
export const MAX_ICONS = 8;
const MAX_SIZES = 8;

/** Exactly `data:TYPE;base64,DATA`, lower-case, canonical base64 (no whitespace, no parameters). */
const DATA_ICON =
  /^data:(image\/[a-z]+);base64,((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;
const SIZE = /^(?:any|[1-9]\d{0,3}x[1-9]\d{0,3})$/;

/** Why an icon's `src` is not passed, or undefined when it is a data image the client can draw. */
export function iconSrcProblem(src: string): string | undefined {
  // Checked before the expression runs, so a huge src costs nothing.
  if (src.length > 64 + Math.ceil(ICON_MAX_BYTES / 3) * 4) return 'it is over the icon size cap';
  const data = DATA_ICON.exec(src);
  if (!data) return 'it is not a base64 data: image (a client would fetch it itself)';
  const [, type, payload] = data as unknown as [string, string, string];
  if (!Object.hasOwn(RASTER_IMAGES, type)) return `${type} is not a raster image type (PNG, JPEG, GIF, WebP)`;
  const bytes = Buffer.from(payload, 'base64');
  if (bytes.length > ICON_MAX_BYTES) return 'it is over the icon size cap';
  // The one check an image item of a result, a prompt or a sampling request passes too (`media.ts`).
  return mediaProblem('image', type, bytes) === undefined ? undefined : `its data is not a ${type} image`;
}

export type CheckedIcons =
  | { readonly icons: Record<string, unknown>[]; readonly dropped: number }
  | { readonly problem: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `icons` rebuilt: each icon whose `src` passes `iconSrcProblem`, with only what MCP defines
 * (`src`; `mimeType` when it names the src's type; `sizes` like `48x48` or `any`; `theme` light or
 * dark), at most `MAX_ICONS`. A dropped icon or member is counted. A value that is not a list of
 * objects with a string `src` is a problem (`at` names it).
 */
export function checkIcons(value: unknown, at: string): CheckedIcons {
  if (!Array.isArray(value)) return { problem: `${at} must be a list` };
  const bad = value.findIndex((icon) => !isObject(icon) || typeof icon.src !== 'string');
  if (bad >= 0) return { problem: `${at}[${bad}] must be an object with a string src` };
  const icons: Record<string, unknown>[] = [];
  let dropped = 0;
  for (const icon of value as Record<string, unknown>[]) {
    const src = icon.src as string;
    if (icons.length >= MAX_ICONS || iconSrcProblem(src) !== undefined) {
      dropped += 1;
      continue;
    }
    const kept: Record<string, unknown> = { src };
    for (const key of Object.keys(icon)) {
      const member = icon[key];
      if (key === 'src') continue;
      if (key === 'mimeType' && member === src.slice(5, src.indexOf(';'))) kept.mimeType = member;
      else if (key === 'theme' && (member === 'light' || member === 'dark')) kept.theme = member;
      else if (
        key === 'sizes' &&
        Array.isArray(member) &&
        member.length <= MAX_SIZES &&
        member.every((size) => typeof size === 'string' && SIZE.test(size))
      )
        kept.sizes = [...member];
      else dropped += 1;
    }
    icons.push(kept);
  }
  return { icons, dropped };
}

/**
 * A listed definition (tool, prompt, resource, template) as the client may see it: its `icons`
 * rebuilt by `checkIcons`, the member left out when none passes or it is malformed (counted as
 * one). The pin keeps the definition as sent, so a changed icon is still a changed definition.
 */
export function withPassableIcons(definition: Readonly<Record<string, unknown>>): {
  readonly definition: Readonly<Record<string, unknown>>;
  readonly dropped: number;
} {
  if (!Object.hasOwn(definition, 'icons')) return { definition, dropped: 0 };
  const { icons, ...rest } = definition;
  const checked = checkIcons(icons, 'icons');
  if ('problem' in checked) return { definition: rest, dropped: 1 };
  return {
    definition: checked.icons.length > 0 ? { ...rest, icons: checked.icons } : rest,
    dropped: checked.dropped,
  };
}

/** The report line (after `ringfence: SERVER: `) for icons of a server's listings not passed on. */
export function iconsNote(dropped: number): string {
  return `${dropped} icon(s) or icon member(s) in its listings were not passed on: a client fetches an icon itself, past the server's egress sidecar, so only base64 data: PNG, JPEG, GIF or WebP images up to ${ICON_MAX_BYTES / 1024} KiB are (see docs/gateway.md#icons)`;
}
