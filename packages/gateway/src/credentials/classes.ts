import type { CredentialClass } from './known.js';

/** The classes `secret set --class` accepts. */
export const CREDENTIAL_CLASSES = [
  'aws',
  'github',
  'gitlab',
  'slack',
  'stripe',
  'google',
  'private-key',
  'jwt',
  'bearer',
  'generic',
] as const satisfies readonly CredentialClass[];

/**
 * The hosts a credential of each class is meaningful to: a contained server with an allowlist
 * may hold it only when every allowlisted host is one of these (else the credential could be sent
 * to a host it was never meant for, by a server that merely has a reason to reach that host).
 * Classes not listed (`bearer`, `jwt`, `private-key`, `generic`) fit any allowlisted host: the
 * person who bound them chose the server. Self-hosted GitLab or GitHub Enterprise: use `generic`.
 * The table is documented in docs/credentials.md; keep the two together.
 */
export const CLASS_HOSTS: Readonly<Partial<Record<string, readonly string[]>>> = {
  aws: ['amazonaws.com', '*.amazonaws.com', '*.amazonaws.com.cn', '*.aws'],
  github: [
    'github.com',
    'api.github.com',
    'uploads.github.com',
    'codeload.github.com',
    '*.githubusercontent.com',
    'ghcr.io',
  ],
  gitlab: ['gitlab.com', '*.gitlab.com', 'registry.gitlab.com'],
  slack: ['slack.com', '*.slack.com'],
  stripe: ['stripe.com', '*.stripe.com'],
  google: ['*.googleapis.com', 'accounts.google.com', 'oauth2.googleapis.com'],
};

export const isCredentialClass = (value: string): value is (typeof CREDENTIAL_CLASSES)[number] =>
  (CREDENTIAL_CLASSES as readonly string[]).includes(value);

/** `host` or `*.domain` of an allowlist entry or URL host, lower case, without its port. */
function bareHost(entry: string): string {
  const host = entry.toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon > 0 && host.indexOf(':') === colon ? host.slice(0, colon) : host;
}

/** Whether the class pattern covers every name `host` (itself maybe `*.domain`) can stand for. */
function covers(pattern: string, host: string): boolean {
  if (!pattern.startsWith('*.')) return pattern === host;
  const suffix = pattern.slice(1); // ".domain"
  // `*.domain` covers `a.domain` and `*.a.domain`, not `domain` itself.
  return host.endsWith(suffix) && host.length > suffix.length;
}

/**
 * The allowlisted hosts a credential of `cls` has no business reaching (empty: it fits). `hosts`
 * are allowlist entries (`api.example.com`, `*.example.com`, `HOST:PORT`) or a remote URL's host.
 */
export function hostsOutsideClass(cls: CredentialClass, hosts: readonly string[]): string[] {
  const allowed = CLASS_HOSTS[cls];
  if (!allowed) return [];
  return hosts.filter((entry) => {
    const host = bareHost(entry);
    return !allowed.some((pattern) => covers(pattern, host));
  });
}

/**
 * The class a value's format says, for `client import` (which has no `--class`): only formats
 * whose prefix is unambiguous; anything else is `generic`. Never logs or returns the value.
 */
export function guessClass(value: string): CredentialClass {
  const v = value.trim().replace(/^bearer\s+/i, '');
  if (/^(AKIA|ASIA)[A-Z0-9]{16}$/.test(v)) return 'aws';
  if (/^(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})$/.test(v)) return 'github';
  if (/^glpat-[A-Za-z0-9_-]{20,}$/.test(v)) return 'gitlab';
  if (/^xox[abposr]-[A-Za-z0-9-]{10,}$/.test(v)) return 'slack';
  if (/^(sk|rk|pk)_(live|test)_[A-Za-z0-9]{10,}$/.test(v)) return 'stripe';
  if (/^AIza[A-Za-z0-9_-]{35}$/.test(v)) return 'google';
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(v)) return 'private-key';
  if (/^eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(v)) return 'jwt';
  if (/^bearer\s+/i.test(value.trim())) return 'bearer';
  return 'generic';
}
