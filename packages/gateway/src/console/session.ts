/**
 * How a browser proves it is the console's own page. Cookies are not scoped by port: any other
 * server on 127.0.0.1 that the person visits receives every cookie of 127.0.0.1, and can replay
 * it from a script, with whatever Host and Origin it likes. So the cookie alone unlocks
 * nothing. When the printed token is exchanged, the browser gets two things that only the
 * console's own origin ever sees:
 *
 * - a cookie (named after the console's port, `HttpOnly; SameSite=Strict`, and scoped to the
 *   page's path, so other servers of 127.0.0.1 are not even sent it), holding a random secret;
 * - the page's address, `/s/<page key>/`, where the page key is an HMAC of that secret under a
 *   key the console made at start and never gives out. The page and everything it fetches are
 *   under that path (relative URLs), so every request carries both.
 *
 * A request is let in only with a cookie whose HMAC is the page key in its path. A replayed
 * cookie without the page key (which another port's server never receives: it is in the
 * console's own address, sent only to the console's origin, with Referrer-Policy no-referrer)
 * gets 401 everywhere, the page included. Nothing is stored per browser: a second browser that
 * opens the printed address gets a pair of its own.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { generateToken, tokensEqual } from '../local-http/guard.js';

/** The prefix of every path the console's page is served under. */
export const SESSION_PREFIX = '/s/';

/** The console's cookie for the console listening on `port`: two consoles never share one. */
export const consoleCookieName = (port: number): string => `ringfence_console_${port}`;

export class ConsoleSessions {
  /** Never leaves this process: a page key cannot be made for a cookie without it. */
  private readonly key = randomBytes(32);

  constructor(private readonly port: number) {}

  /** A new cookie secret and the page path that goes with it. */
  mint(): { cookie: string; pagePath: string } {
    const cookie = generateToken();
    return { cookie, pagePath: `${SESSION_PREFIX}${this.pageKeyOf(cookie)}/` };
  }

  /** `Set-Cookie` for a minted pair: scoped to the page's path, unreadable by scripts. */
  setCookie(minted: { cookie: string; pagePath: string }): string {
    return `${consoleCookieName(this.port)}=${minted.cookie}; HttpOnly; SameSite=Strict; Path=${minted.pagePath}`;
  }

  /**
   * The rest of the path after `/s/<page key>/` when the request holds the cookie that page key
   * was made for; undefined otherwise. `/s/<page key>` without its slash gives `''` too (the
   * server redirects it, so the page's relative URLs resolve under it).
   */
  admit(req: IncomingMessage, pathname: string): { rest: string; slash: boolean } | undefined {
    if (!pathname.startsWith(SESSION_PREFIX)) return undefined;
    const after = pathname.slice(SESSION_PREFIX.length);
    const slash = after.indexOf('/');
    const pageKey = slash === -1 ? after : after.slice(0, slash);
    if (pageKey === '') return undefined;
    // Every cookie of this name is tried: another server of 127.0.0.1 can add cookies of the same
    // name (on another path), and that must not lock the page out.
    const expected = this.cookiesOf(req).map((cookie) => this.pageKeyOf(cookie));
    if (!expected.some((key) => tokensEqual(pageKey, key))) return undefined;
    return { rest: slash === -1 ? '' : after.slice(slash + 1), slash: slash !== -1 };
  }

  private pageKeyOf(cookie: string): string {
    return createHmac('sha256', this.key).update(`ringfence-console-page:${cookie}`).digest('base64url');
  }

  /** The values of every cookie of this console's name the request carries. */
  private cookiesOf(req: IncomingMessage): string[] {
    const name = consoleCookieName(this.port);
    const found: string[] = [];
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq !== -1 && part.slice(0, eq).trim() === name) found.push(part.slice(eq + 1).trim());
    }
    return found.slice(0, 8);
  }
}
