/**
 * The credentials a registration already holds: a contained server's `-e` values and a remote
 * server's header values, as mcp-servers.json keeps them (until the credential store holds them,
 * `client import` and `mcp add -e NAME=@secret:ID` included). Each counts as a stored credential
 * bound to its own server, so the egress scan refuses it in a call to any other server and the
 * ingress scan removes it from every result.
 *
 * Not every value there is a secret (`LOG_LEVEL=debug`): a value counts when its name says it is
 * a credential (`API_KEY`, `Authorization`…), or it has a known token format, or it looks like a
 * long random word: the redactor's own rules (text/secret-shapes.ts). A reference to the store
 * (`@secret:ID`) is not a value and is left to the store.
 */

import type { ServerConfig } from '../config/servers.js';
import { hasTokenShape, isCredentialName, looksLikeSecretWord } from '../text/secret-shapes.js';
import type { KnownCredential, KnownCredentials } from './known.js';
import { findFormats } from './scan/formats.js';
import { MIN_VALUE_LENGTH } from './scan/literals.js';

const STORE_REFERENCE = /^@secret:/;

function isSecretValue(name: string, value: string): boolean {
  if (value.length < MIN_VALUE_LENGTH || STORE_REFERENCE.test(value)) return false;
  return isCredentialName(name) || hasTokenShape(value) || looksLikeSecretWord(value);
}

/** A vendor the variable's name names (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`): the class of its value. */
const NAMED_CLASSES: readonly [RegExp, string][] = [
  [/(?:^|[^a-z])aws(?:[^a-z]|$)/i, 'aws'],
  [/github|(?:^|[^a-z])gh(?:[^a-z]|$)/i, 'github'],
  [/gitlab/i, 'gitlab'],
  [/slack/i, 'slack'],
  [/stripe/i, 'stripe'],
  [/google|gcp|gemini/i, 'google'],
  [/openai/i, 'openai'],
  [/anthropic|claude/i, 'anthropic'],
];

function classOf(name: string, value: string): string {
  return (
    findFormats(value)[0]?.class ?? NAMED_CLASSES.find(([pattern]) => pattern.test(name))?.[1] ?? 'generic'
  );
}

/** `Bearer X`: the credential is X (the scheme word alone is not secret). */
const withoutScheme = (value: string): string => value.replace(/^(?:Bearer|Basic|Token)\s+/i, '');

/** The registrations' credential values, each bound to its own server. */
export function registeredCredentials(servers: readonly ServerConfig[]): KnownCredential[] {
  const found: KnownCredential[] = [];
  for (const server of servers) {
    const pairs =
      server.transport === 'container'
        ? Object.entries(server.env ?? {}).map(([name, value]) => ({ name, value, where: 'env' }))
        : Object.entries(server.headers ?? {}).map(([name, value]) => ({
            name,
            value: withoutScheme(value),
            where: 'header',
          }));
    for (const { name, value, where } of pairs) {
      if (!isSecretValue(name, value)) continue;
      found.push({
        id: `${server.name}:${where}:${name}`,
        class: classOf(name, value),
        value,
        boundTo: [server.name],
      });
    }
  }
  return found;
}

/** Several sources as one: every credential of each, in order. */
export function combinedCredentials(...sources: readonly (KnownCredentials | undefined)[]): KnownCredentials {
  const present = sources.filter((s): s is KnownCredentials => s !== undefined);
  return { all: async () => (await Promise.all(present.map((s) => s.all()))).flat() };
}

/** A fixed list (the registrations', tests' own). */
export const fixedCredentials = (credentials: readonly KnownCredential[]): KnownCredentials => ({
  all: async () => credentials,
});
