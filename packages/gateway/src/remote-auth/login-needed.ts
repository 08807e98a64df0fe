import { UpstreamError } from '../ports/errors.js';
import { clip, rendered } from '../text/render.js';
import { droppedNote, safeScopes, shellQuoted } from './scope-tokens.js';

/** Why a remote server's requests need a (new) login before they can be sent. */
export type LoginNeededReason =
  /** No login was ever made for it (or it was logged out). */
  | { readonly kind: 'missing' }
  /** The access token expired and there is no refresh token to renew it. */
  | { readonly kind: 'expired' }
  /** The authorization server refused to renew it, or the server refused it: revoked or expired. */
  | { readonly kind: 'revoked'; readonly detail?: string }
  /**
   * The server needs a scope the token does not carry (`insufficient_scope`): a step-up. `scope`
   * is filtered again where it is shown (scope-tokens.ts); `dropped`: the server's tokens left out.
   */
  | { readonly kind: 'insufficient-scope'; readonly scope: string; readonly dropped?: readonly string[] }
  /** The login was made for another origin than the one the server is registered at now. */
  | { readonly kind: 'other-origin'; readonly loggedInAt: string; readonly registeredAt: string };

/** The server's words (a scope, an error code) inside ours: one line, capped, printable. */
const quoted = (text: string): string => rendered(clip(text, 200), 'line');

/** The shell-safe scope tokens of a step-up (the server chose them), space-separated; '' when none. */
const stepUpScope = (reason: LoginNeededReason | undefined): string =>
  reason?.kind === 'insufficient-scope' ? safeScopes(reason.scope).kept.join(' ') : '';

/**
 * The command that makes the login, with the wider scope for a step-up: only shell-safe scope
 * tokens, single-quoted (a server's scope must never become shell syntax in a command people run).
 */
export function loginCommand(server: string, reason?: LoginNeededReason): string {
  const scope = stepUpScope(reason);
  return `ringfence mcp auth login ${server}${scope ? ` --scope ${shellQuoted(scope)}` : ''}`;
}

/**
 * The words people (and the model) read when a remote server needs a login: what happened and
 * the one command that fixes it. Used for the tool result of a call, the `mcp serve` stderr line,
 * `mcp ls` and `doctor`, so they all say the same. Never contains a token: only the server's
 * name, the scope it asked for, and the reason.
 */
export function loginNeededText(server: string, reason: LoginNeededReason): string {
  const command = loginCommand(server, reason);
  switch (reason.kind) {
    case 'missing':
      return `${server} needs an OAuth login and none was made yet. Log in (a browser opens) with: ${command}`;
    case 'expired':
      return `${server}'s OAuth login has expired and cannot be renewed (the authorization server gave no refresh token). Log in again with: ${command}`;
    case 'revoked':
      return `${server}'s OAuth login is no longer accepted${reason.detail ? ` (${quoted(reason.detail)})` : ''}: it was revoked or has expired. Log in again with: ${command}`;
    case 'other-origin':
      return `${server}'s OAuth login was made for ${quoted(reason.loggedInAt)}, but the server is registered at ${quoted(reason.registeredAt)} now; its token is not sent there. Log in again with: ${command}`;
    case 'insufficient-scope':
      return `${server} needs a wider permission than the login granted (${
        stepUpScope(reason) ? `scope ${shellQuoted(stepUpScope(reason))}` : 'a wider scope'
      }).${droppedNote([...new Set([...(reason.dropped ?? []), ...safeScopes(reason.scope).dropped])])} Log in again asking for it with: ${command}`;
  }
}

/** A request that cannot be sent until someone logs in: its message is {@link loginNeededText}. */
export class LoginNeededError extends UpstreamError {
  constructor(
    readonly server: string,
    readonly reason: LoginNeededReason,
  ) {
    super('LOGIN_NEEDED', loginNeededText(server, reason));
    this.name = 'LoginNeededError';
  }
}

export const isLoginNeeded = (error: unknown): error is LoginNeededError =>
  (error as { code?: unknown })?.code === 'LOGIN_NEEDED';
