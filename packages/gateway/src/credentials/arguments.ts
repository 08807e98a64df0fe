/**
 * A credential never reaches a contained server in its argument list (docs/credentials.md): an
 * argument is on the engine's container spec, in `docker inspect`, in mcp-servers.json and in the
 * process list of the host. It goes in as the one variable its binding names (`-e VAR=@secret:NAME`).
 *
 * This finds the argument of a command that carries one, with why, never the value. Two depths:
 * `formats` (registration: a known token format, a JWT, a private-key block) and `full` (`client
 * import`, where a client's config often writes `--token VALUE`): also the value of a flag named
 * like a credential (`--token X`, `--api-key=X`, `--client-secret X`), and a word the redactor of
 * what people see would hide (a long random word, a URL or `NAME=VALUE` that carries a secret).
 */

import { redactValue } from '../text/redact.js';
import { rendered } from '../text/render.js';
import { isCredentialName } from '../text/secret-shapes.js';
import { findFormats } from './scan/formats.js';

export interface SecretArgument {
  /** 0-based index in the command. */
  readonly index: number;
  /** Why it counts as a credential, without the value. */
  readonly why: string;
}

/** A flag on its own: `-x`, `--name`, `--name-with-dashes`. */
const FLAG = /^--?[A-Za-z][A-Za-z0-9_.-]*$/;
/** `--name=value`. */
const FLAG_WITH_VALUE = /^(--?[A-Za-z][A-Za-z0-9_.-]*)=([\s\S]*)$/;
/** A scheme word before the credential itself (`--auth Bearer X`). */
const SCHEME_WORD = /^(?:Bearer|Basic|Token|ApiKey|Api-Key|Key)$/i;

/** `--token`, `--api-key`, `--clientSecret` (not `--token-file`: that names where it is). */
const isCredentialFlag = (flag: string): boolean => {
  const name = flag.replace(/^--?/, '');
  return name.length > 1 && isCredentialName(name);
};

/** The first argument of `command` that carries a credential, or undefined. */
export function findSecretArgument(
  command: readonly string[],
  depth: 'formats' | 'full',
): SecretArgument | undefined {
  // Known formats first, everywhere: they name the class (`--token ghp_…` is a github key).
  for (let i = 0; i < command.length; i++) {
    const format = findFormats(command[i]!)[0];
    if (format) return { index: i, why: `it has the format of a ${format.class} key` };
  }
  if (depth === 'formats') return undefined;
  for (let i = 0; i < command.length; i++) {
    const arg = command[i]!;
    const withValue = FLAG_WITH_VALUE.exec(arg);
    if (withValue && withValue[2] !== '' && isCredentialFlag(withValue[1]!))
      return { index: i, why: `it is the value of ${rendered(withValue[1]!, 'name')}` };
    if (FLAG.test(arg) && isCredentialFlag(arg)) {
      let at = i + 1;
      // A long flag next is a flag of its own (`--token --port 80`); a secret may start with `-`.
      if (command[at] !== undefined && !/^--[A-Za-z]/.test(command[at]!)) {
        if (SCHEME_WORD.test(command[at]!) && command[at + 1] !== undefined) at++;
        const value = command[at]!;
        if (value !== '') return { index: at, why: `it follows ${rendered(arg, 'name')}` };
      }
    }
    if (redactValue(arg) !== arg)
      return {
        index: i,
        why: 'it looks like a secret (a long random word, or a URL or NAME=VALUE that carries one)',
      };
  }
  return undefined;
}

/** What to do instead, for a refusal: the value goes into the store and in as one variable. */
export const ARGUMENT_SECRET_ADVICE =
  'ringfence never puts a credential in a container’s argument list (the engine, docker inspect, mcp-servers.json and the host’s process list would all show it). Store it with ringfence secret set NAME --class CLASS --bind SERVER (the value is read from the terminal or stdin), then register the server by hand with -e VAR=@secret:NAME and the command without it, if the server can read the credential from the variable VAR';
