import type Docker from 'dockerode';
import { type ContainerServerConfig, type ServerConfig, ServerStore } from '../config/servers.js';
import { checkSecretReferences, secretReferences } from '../credentials/references.js';
import { CredentialStore } from '../credentials/store.js';
import { buildNodeBaseImage } from '../images/node-base.js';
import { EXACT_VERSION, fetchNpmPackage, type NpmRequest } from '../images/npm-fetch.js';
import { buildNpmServerImage, installedVersion, type NpmSpec } from '../images/npm-server.js';
import { RegistrationError } from './errors.js';
import { type ContainerDraft, type ImageSource, planRegistration, type RegistrationInput } from './plan.js';
import { checkRegistrationAgainstPolicy, type RegistrationPolicy } from './policy.js';

export interface RegisterOptions {
  /** RINGFENCE_HOME: where mcp-servers.json is. */
  readonly home: string;
  readonly policy: RegistrationPolicy;
  /** Called only for a contained server, and only once its flags are valid. */
  readonly engine: () => Promise<Docker>;
  /** The directory an --npm package is installed under (its node_modules are searched upwards). */
  readonly from: string;
  /** Told what happened on the way that the person should know (a fetch, skipped install scripts). */
  readonly notify?: (line: string) => void;
}

export interface NpmImageOptions {
  /** Where a package installed by hand is looked for first (node_modules, upwards). */
  readonly from: string;
  /** RINGFENCE_HOME: where fetched packages are kept. */
  readonly home: string;
  readonly notify?: (line: string) => void;
}

/**
 * Build an image for an npm package, on the Node base image (built if missing): from the exact
 * version installed under `from` when there is one, else from the copy ringfence fetched into
 * its home (fetched now if it is not there yet).
 */
export async function buildNpmImage(
  docker: Docker,
  request: NpmRequest,
  options: NpmImageOptions,
): Promise<{ ref: string; spec: NpmSpec }> {
  let spec: NpmSpec;
  let from = options.from;
  if (EXACT_VERSION.test(request.wanted) && installedVersion(request.name, from) === request.wanted) {
    spec = { name: request.name, version: request.wanted };
  } else {
    const fetched = await fetchNpmPackage(request, { home: options.home });
    spec = fetched.spec;
    from = fetched.dir;
    const asked = `${request.name}@${request.wanted}`;
    const exact = `${spec.name}@${spec.version}`;
    options.notify?.(
      `${fetched.fetched ? 'Fetched' : 'Using the copy already fetched of'} ${exact}${asked === exact ? '' : ` (for ${asked})`}, install scripts disabled, in ${fetched.dir}`,
    );
    if (fetched.skippedScripts.length > 0) {
      options.notify?.(
        `Not run: the install scripts of ${fetched.skippedScripts.join(', ')}. ringfence never runs them; if the server fails to start without them, use an image its publisher built instead (ringfence mcp add NAME --image REF).`,
      );
    }
  }
  const baseRef = (await buildNodeBaseImage(docker)).ref;
  return { ref: (await buildNpmServerImage(docker, { spec, from, baseRef })).ref, spec };
}

/** The image as the engine has it; ringfence never pulls implicitly. */
export async function inspectLocalImage(docker: Docker, image: string): Promise<Docker.ImageInspectInfo> {
  try {
    return await docker.getImage(image).inspect();
  } catch (error) {
    throw new RegistrationError(
      'REGISTRATION_IMAGE_MISSING',
      `The image ${image} is not on this host; ringfence never pulls implicitly. Pull or build it first (docker pull ${image}), then add the server again.`,
      { cause: error },
    );
  }
}

/** A contained server with its image ID recorded, in the field order mcp-servers.json keeps. */
export function withImage(draft: ContainerDraft, image: string, imageId: string): ContainerServerConfig {
  const { name, transport, ...rest } = draft;
  return { name, transport, image, image_id: imageId, ...rest };
}

async function resolveContained(
  source: ImageSource,
  draft: ContainerDraft,
  options: RegisterOptions,
): Promise<ContainerServerConfig> {
  const docker = await options.engine();
  const image =
    'npm' in source
      ? (
          await buildNpmImage(docker, source.npm, {
            from: options.from,
            home: options.home,
            ...(options.notify ? { notify: options.notify } : {}),
          })
        ).ref
      : source.image;
  const info = await inspectLocalImage(docker, image);
  const server = withImage(draft, image, info.Id);
  checkRegistrationAgainstPolicy(options.policy, server, info);
  return server;
}

/**
 * `ringfence mcp add`: validate the flags (nothing touches the engine before they pass), find or
 * build the image, check it and the egress against the organisation policy, and record the server.
 * Nothing is written unless every step passed.
 */
export async function registerServer(
  input: RegistrationInput,
  options: RegisterOptions,
): Promise<ServerConfig> {
  const plan = planRegistration(input, { defaultEgress: options.policy.defaultEgress });
  const credentials = new CredentialStore(options.home);
  // Checked before an image is built, and again once the server is complete (same answer).
  await checkSecretReferences(
    plan.transport === 'http' ? plan.server : withImage(plan.draft, '', ''),
    credentials,
  );
  const server =
    plan.transport === 'http' ? plan.server : await resolveContained(plan.source, plan.draft, options);
  await checkSecretReferences(server, credentials);
  await new ServerStore(options.home).add(server);
  return server;
}

/** What `mcp add` prints once the server is recorded. */
/** What a server may ask of the client, for listings: `sampling, elicitation`, or undefined. */
export function clientRequestsOf(server: ServerConfig): string | undefined {
  const asks = [server.allow_sampling && 'sampling', server.allow_elicitation && 'elicitation'].filter(
    Boolean,
  );
  return asks.length > 0 ? asks.join(', ') : undefined;
}

/** What happens the first time the gateway lists the server, and the command that does it. */
function firstSightSentence(server: ServerConfig): string {
  return server.review_first
    ? `Its tools are withheld from clients until you approve them (--review-first): ringfence mcp tools, then read each whole with ringfence mcp pins show ${server.name} and approve at a terminal with ringfence mcp pins approve ${server.name}`
    : 'Its tools are pinned the first time the gateway starts: ringfence mcp tools';
}

/** ` It gets VAR from credential NAME, …`: which stored credential each reference names (never a value). */
function credentialsSentence(server: ServerConfig): string {
  const refs = secretReferences(server);
  if (refs.length === 0) return '';
  const what = server.transport === 'http' ? 'header' : 'variable';
  return `. It gets ${refs.map((r) => `${what} ${r.key} from credential ${r.credential}`).join(', ')} (read from the store at each start)`;
}

export function registrationSummary(server: ServerConfig): string {
  const first = firstSightSentence(server) + credentialsSentence(server);
  const asks = clientRequestsOf(server);
  const may = asks
    ? ` It may ask the client for ${asks} while it answers a call, if the organisation policy allows it too.`
    : '';
  if (server.transport === 'http') {
    const login = server.oauth
      ? ` It is protected by OAuth: log in with: ringfence mcp auth login ${server.name}`
      : '';
    return `Registered ${server.name} (remote ${new URL(server.url).host}). ${first}${may}${login}`;
  }
  const egress =
    server.egress.mode === 'allow'
      ? `egress only to ${server.egress.hosts?.join(', ')}`
      : server.egress.mode === 'any'
        ? 'unrestricted egress'
        : 'no network';
  return `Registered ${server.name} (image ${server.image}, ${server.image_id.slice(0, 19)}; ${egress}). ${first}${may}`;
}
