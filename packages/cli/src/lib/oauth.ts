import { spawn } from 'node:child_process';
import { type HttpServerConfig, ServerStore } from '@ringfence/gateway/config';
import { issuerAllowed, issuerListed } from '@ringfence/gateway/remote-auth';
import { loadInstalledPolicy, type Policy } from '@ringfence/policy';
import { CliError } from './errors.js';

/** The remote registration `name` if it is logged in by OAuth, else a refusal naming the fix. */
export async function oauthRegistration(home: string, name: string): Promise<HttpServerConfig> {
  const server = await new ServerStore(home).get(name);
  if (server.transport !== 'http' || !server.oauth)
    throw new CliError(
      'OAUTH_NOT_REGISTERED',
      `${name} is not registered for OAuth login. Register a remote server with: ringfence mcp rm ${name} && ringfence mcp add ${name} --url URL --oauth`,
    );
  return server;
}

/**
 * The organisation policy's issuer checks for a login. An installed policy that fails any check
 * refuses the login (fail closed), exactly as `mcp serve` refuses to start.
 */
export async function issuerChecks(
  home: string,
  name: string,
): Promise<{
  issuerAllowed: (issuer: string) => string | undefined;
  issuerListed: (issuer: string) => boolean;
}> {
  const installed = await loadInstalledPolicy({ home });
  if (!installed.ok)
    throw new CliError(
      'POLICY_REFUSED',
      `The installed organisation policy is refused (${installed.code}): ${installed.message} No OAuth login runs without a valid policy once one is installed. Check it with: ringfence doctor`,
    );
  const policy: Policy | undefined = installed.present ? installed.policy : undefined;
  return {
    issuerAllowed: (issuer) => issuerAllowed(policy, name, issuer),
    issuerListed: (issuer) => issuerListed(policy, name, issuer),
  };
}

/**
 * Whether the organisation policy lists an issuer for `name`, for logout's revocation: a refused
 * (unverifiable) policy lists nothing, so an off-origin revocation endpoint is not sent the
 * tokens, while logout still forgets them locally.
 */
export async function issuerListedCheck(home: string, name: string): Promise<(issuer: string) => boolean> {
  const installed = await loadInstalledPolicy({ home });
  const policy: Policy | undefined = installed.ok && installed.present ? installed.policy : undefined;
  return (issuer) => issuerListed(policy, name, issuer);
}

/** Opens the URL with $BROWSER, else xdg-open; resolves once started, rejects when it cannot be. */
export function openBrowser(url: string): Promise<void> {
  const command = process.env.BROWSER?.trim() || 'xdg-open';
  return new Promise((resolve, reject) => {
    // The URL is one argument, never through a shell.
    const child = spawn(command, [url], { detached: true, stdio: 'ignore' });
    child.once('error', reject);
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}

/** A client secret from stdin (never argv: argv is visible to every process on the machine). */
export async function readSecretFromStdin(stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > 8192)
      throw new CliError(
        'OAUTH_SECRET_INPUT',
        'The client secret on stdin is longer than 8 KiB; give only the secret.',
      );
    chunks.push(buffer);
  }
  const secret = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (!secret || /[\r\n]/.test(secret))
    throw new CliError(
      'OAUTH_SECRET_INPUT',
      'No client secret (one line) was read from stdin. Pipe it in, for example: ringfence mcp auth login NAME --client-secret-stdin < secret.txt',
    );
  return secret;
}

export const inSeconds = (at: number | undefined, now: number): string =>
  at === undefined
    ? 'unknown (the server did not say)'
    : at <= now
      ? 'expired'
      : `${Math.round((at - now) / 1000)} s`;
