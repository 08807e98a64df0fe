/**
 * `ringfence mcp add`'s flags → the server to register. Pure: everything a person can get wrong
 * on the command line is refused here, before any engine is asked or any image is built.
 */

import { type CallTimeouts, limitsProblem } from '../config/limits.js';
import {
  type ContainerServerConfig,
  type EgressRule,
  type HttpServerConfig,
  type MountRule,
  type OAuthRegistration,
  validateEgressEntries,
  validateEgressRule,
  validateRemoteUrl,
  validateServerName,
} from '../config/servers.js';
import { ARGUMENT_SECRET_ADVICE, findSecretArgument } from '../credentials/arguments.js';
import { type NpmRequest, parseNpmRequest } from '../images/npm-fetch.js';
import { REDACTED } from '../text/redact.js';
import { RegistrationError } from './errors.js';

/** The flags of `mcp add`, as given (repeatable flags as lists). */
export interface RegistrationInput {
  readonly name: string;
  readonly image?: string;
  readonly npm?: string;
  readonly url?: string;
  /** What follows `--`: the contained server's command. */
  readonly command?: readonly string[];
  readonly egress?: string;
  readonly egressAllow?: readonly string[];
  readonly egressAllowAddress?: readonly string[];
  /** KEY=VALUE. */
  readonly env?: readonly string[];
  readonly allowTools?: readonly string[];
  /** PATH[:rw] or PATH[:ro], relative to the workspace. */
  readonly mounts?: readonly string[];
  /** KEY=VALUE. */
  readonly headers?: readonly string[];
  /** Seconds a call may go without an answer or progress. */
  readonly callTimeout?: number;
  /** Seconds a call may run in all. */
  readonly callCeiling?: number;
  /** The result cap in MiB (base64 content counted decoded). */
  readonly maxResultMb?: number;
  /** `--allow-sampling`: the server may ask the client's model, within the policy. */
  readonly allowSampling?: boolean;
  /** `--allow-elicitation`: the server may ask the person questions, within the policy. */
  readonly allowElicitation?: boolean;
  /** `--review-first`: withhold every definition on first sight until a person approves them. */
  readonly reviewFirst?: boolean;
  /** `--protocol 2025`: speak MCP 2025 to the server even when it also offers 2026-07-28. */
  readonly protocol?: '2025';
  /** `--oauth` (with `--client-id`, `--scope`, `--client-metadata-url`): logged in by OAuth. */
  readonly oauth?: OAuthRegistration;
}

/** `allow_sampling` and `allow_elicitation` of the entry: written only when given. */
function clientRequestsFromFlags(input: RegistrationInput): {
  allow_sampling?: true;
  allow_elicitation?: true;
} {
  return {
    ...(input.allowSampling ? { allow_sampling: true } : {}),
    ...(input.allowElicitation ? { allow_elicitation: true } : {}),
  };
}

/** `review_first` of the entry: written only when given (absent: the policy decides, else pin). */
const reviewFromFlags = (input: RegistrationInput): { review_first?: true; protocol?: '2025' } => ({
  ...(input.reviewFirst ? { review_first: true } : {}),
  ...(input.protocol ? { protocol: input.protocol } : {}),
});

/** A contained server before its image exists on the engine (an npm image is built later). */
export type ContainerDraft = Omit<ContainerServerConfig, 'image' | 'image_id'>;

export type ImageSource = { readonly image: string } | { readonly npm: NpmRequest };

export type RegistrationPlan =
  | { readonly transport: 'http'; readonly server: HttpServerConfig }
  | { readonly transport: 'container'; readonly source: ImageSource; readonly draft: ContainerDraft };

const usage = (message: string) => new RegistrationError('REGISTRATION_USAGE', message);

/** `timeouts` and `max_result_mb` of the entry, from the flags that give them. */
export function limitsFromFlags(input: RegistrationInput): {
  timeouts?: CallTimeouts;
  max_result_mb?: number;
} {
  const timeouts: CallTimeouts = {
    ...(input.callTimeout !== undefined ? { call_seconds: input.callTimeout } : {}),
    ...(input.callCeiling !== undefined ? { ceiling_seconds: input.callCeiling } : {}),
  };
  const limits = {
    ...(Object.keys(timeouts).length > 0 ? { timeouts } : {}),
    ...(input.maxResultMb !== undefined ? { max_result_mb: input.maxResultMb } : {}),
  };
  const problem = limitsProblem(limits, {
    timeouts: 'timeouts',
    call: '--call-timeout',
    ceiling: '--call-ceiling',
    maxResult: '--max-result-mb',
  });
  if (problem) throw usage(`${problem}.`);
  return limits;
}

/**
 * A refused `--env`/`--header` value as the refusal shows it: nothing of a value, ever. What was
 * given instead of KEY=VALUE is often the secret itself (`-e $TOKEN` expanded, a short password as
 * much as a long token) or a header written `Name: value`: a name before `:` or `=` is kept (when
 * it is a plain name) and the rest is `***`; a word alone is shown only when it is an environment
 * variable's name (`NOVALUE`: upper case, digits, `_`), else `***`.
 */
export function refusedPairShown(value: string): string {
  const at = value.search(/[=:]/);
  if (at >= 0) {
    const name = value.slice(0, at);
    return `${/^[A-Za-z0-9_.-]*$/.test(name) ? name : REDACTED}${value[at] === ':' ? ': ' : '='}${REDACTED}`;
  }
  return /^[A-Z_][A-Z0-9_]{0,63}$/.test(value) ? value : REDACTED;
}

/** Repeated KEY=VALUE flags → a record; an entry without "=" (or with an empty key) is refused. */
export function parseKeyValues(values: readonly string[] | undefined, flag: string): Record<string, string> {
  const record: Record<string, string> = {};
  for (const value of values ?? []) {
    const index = value.indexOf('=');
    if (index <= 0) throw usage(`${flag} expects KEY=VALUE, got "${refusedPairShown(value)}"`);
    record[value.slice(0, index)] = value.slice(index + 1);
  }
  return record;
}

/** `--mount` specs → mount rules: relative paths inside the workspace, read-only unless `:rw`. */
export function parseMounts(specs: readonly string[] | undefined): MountRule[] {
  return (specs ?? []).map((spec) => {
    const rw = spec.endsWith(':rw');
    const path = rw ? spec.slice(0, -3) : spec.replace(/:ro$/, '');
    if (!path || path.startsWith('/') || path.split('/').includes('..')) {
      throw usage(`--mount "${spec}" must be a relative path inside the workspace (e.g. docs or out:rw).`);
    }
    return { path, mode: rw ? 'rw' : 'ro' };
  });
}

/**
 * The egress rule the flags ask for. Every host and range goes through the egress proxy's own
 * parsers, so what the sidecar would refuse at start is refused here, with its message.
 */
export function egressFromFlags(input: RegistrationInput, defaultEgress: 'deny' | 'any'): EgressRule {
  const hosts = (input.egressAllow ?? []).map((host) => host.trim().toLowerCase());
  const addresses = [...(input.egressAllowAddress ?? [])];
  const labels = { hosts: '--egress-allow', addresses: '--egress-allow-address' };
  // Each value first, so a bad host or range is named with the proxy's reason whatever else is wrong.
  validateEgressEntries({ hosts, addresses }, labels);
  if (input.egress !== undefined && input.egress !== 'deny' && input.egress !== 'any')
    throw usage(`--egress must be deny or any, got "${input.egress}".`);
  if (input.egress && hosts.length > 0)
    throw usage(
      '--egress and --egress-allow exclude each other: --egress-allow already means "only these hosts".',
    );
  if (addresses.length > 0 && hosts.length === 0)
    throw usage('--egress-allow-address needs at least one --egress-allow host.');
  const rule: EgressRule =
    hosts.length > 0
      ? { mode: 'allow', hosts, ...(addresses.length > 0 ? { addresses } : {}) }
      : { mode: (input.egress as 'deny' | 'any' | undefined) ?? defaultEgress };
  validateEgressRule(rule, labels);
  return rule;
}

function planRemote(input: RegistrationInput): HttpServerConfig {
  const containedOnly = [
    ['--egress', input.egress],
    ['--egress-allow', input.egressAllow],
    ['--egress-allow-address', input.egressAllowAddress],
    ['--env', input.env],
    ['--mount', input.mounts],
  ] as const;
  for (const [flag, value] of containedOnly) {
    if (value !== undefined) throw usage(`${flag} applies to contained servers, not to --url.`);
  }
  const url = input.url!;
  validateRemoteUrl(url);
  const headers = parseKeyValues(input.headers, '--header');
  return {
    name: input.name,
    transport: 'http',
    url,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(input.oauth ? { oauth: { ...input.oauth } } : {}),
    ...(input.allowTools ? { allow_tools: [...input.allowTools] } : {}),
    ...limitsFromFlags(input),
    ...clientRequestsFromFlags(input),
    ...reviewFromFlags(input),
  };
}

function planContained(
  input: RegistrationInput,
  defaultEgress: 'deny' | 'any',
): { source: ImageSource; draft: ContainerDraft } {
  if (input.headers) throw usage('--header applies to remote servers (--url) only.');
  if (input.oauth) throw usage('--oauth applies to remote servers (--url) only.');
  const egress = egressFromFlags(input, defaultEgress);
  const mounts = parseMounts(input.mounts);
  const env = parseKeyValues(input.env, '--env');
  const source: ImageSource = input.npm ? { npm: parseNpmRequest(input.npm) } : { image: input.image! };
  const command = input.command ?? [];
  // Known formats only: a person's own command (`-- --port 8080`) is not second-guessed further,
  // but a token there would sit in the container spec, mcp-servers.json and `ps` (import checks more).
  const secret = findSecretArgument(command, 'formats');
  if (secret)
    throw usage(
      `Argument ${secret.index + 1} of the command after -- carries a credential (${secret.why}; the value is not shown). ${ARGUMENT_SECRET_ADVICE}.`,
    );
  return {
    source,
    draft: {
      name: input.name,
      transport: 'container',
      ...(command.length > 0 ? { command: [...command] } : {}),
      egress,
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(input.allowTools ? { allow_tools: [...input.allowTools] } : {}),
      ...(mounts.length > 0 ? { mounts } : {}),
      ...limitsFromFlags(input),
      ...clientRequestsFromFlags(input),
      ...reviewFromFlags(input),
    },
  };
}

/**
 * Validate the flags and build what to register. A remote server is complete; a contained one
 * still needs its image (found or built on the engine) and its image ID.
 */
export function planRegistration(
  input: RegistrationInput,
  options: { defaultEgress: 'deny' | 'any' },
): RegistrationPlan {
  validateServerName(input.name);
  const sources = [input.image, input.npm, input.url].filter(Boolean).length;
  if (sources !== 1) throw usage('Give exactly one of --image, --npm or --url.');
  if (input.url) return { transport: 'http', server: planRemote(input) };
  return { transport: 'container', ...planContained(input, options.defaultEgress) };
}
