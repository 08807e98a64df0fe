// What the remote-auth end-to-end tests share: the world (a real authorization server and the
// protected MCP server it issues tokens for), `ringfence mcp auth login` driven through chromium,
// and the byte-for-byte search for every secret in every output and file a person could see.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type OAuthEntry, OAuthTokenStore } from '@ringfence/gateway/remote-auth';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../fixtures/oauth/authorization-server.mjs';
import { CHROMIUM, loginInBrowser, loginUrlIn } from '../fixtures/oauth/browser-login.mjs';
import {
  NARROW_SCOPE,
  type ProtectedMcpServer,
  startProtectedMcpServer,
  WIDE_SCOPE,
} from '../fixtures/oauth/protected-mcp-server.mjs';
import { type CliResult, cliBin, ringfence, unwrap } from './cli.js';
import { track } from './processes.js';

export { NARROW_SCOPE, WIDE_SCOPE };

export function requireChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing. Run scripts/ensure-browser (as root on Debian it installs Debian's chromium), then run the tests again.`,
    );
}

export interface OAuthWorld {
  readonly as: AuthorizationServer;
  readonly notes: ProtectedMcpServer;
  close(): Promise<void>;
}

/** The authorization server and the notes server it issues tokens for (both scopes). */
export async function startOAuthWorld(): Promise<OAuthWorld> {
  const as = await startAuthorizationServer();
  const notes = await startProtectedMcpServer({
    issuer: as.issuer,
    grantActive: (gid) => as.grantActive(gid),
  });
  as.addResource(notes.resource, [NARROW_SCOPE, WIDE_SCOPE]);
  return {
    as,
    notes,
    close: async () => {
      await notes.close();
      await as.close();
    },
  };
}

/** Everything the tests' ringfence processes printed, for the secret search at the end. */
export const transcript: string[] = [];

/** `ringfence …` as a person runs it, its output kept in the transcript. */
export async function rf(args: string[], home: string, input?: string): Promise<CliResult> {
  const result = await ringfence(args, { RINGFENCE_HOME: home }, input);
  transcript.push(result.stdout, result.stderr);
  return result;
}

export interface BrowserLogin extends CliResult {
  /** Where the browser ended (ringfence's loopback callback, with the code in its query). */
  readonly browser?: { url: string; text: string; offLoopback: string[] };
}

/**
 * `ringfence mcp auth login NAME --no-browser`, the printed URL opened in chromium, the provider's
 * login and consent pages filled in. With `drive`, the test does what the browser would (a forged
 * callback), and the process is stopped 5 s after if it is still waiting. `issuer`: the origin the
 * printed URL must be on (a URL on any other origin is not opened).
 */
export async function loginThroughBrowser(
  home: string,
  name: string,
  issuer: string,
  options: { args?: string[]; drive?: (url: string) => Promise<void> } = {},
): Promise<BrowserLogin> {
  const child = track(
    spawn(process.execPath, [cliBin, 'mcp', 'auth', 'login', name, '--no-browser', ...(options.args ?? [])], {
      env: { ...process.env, RINGFENCE_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let closed = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      closed = true;
      resolve(code);
    }),
  );
  let browser: BrowserLogin['browser'];
  // The URL, or nothing when the login stops before it prints one (a refusal).
  let url: string | undefined;
  for (const deadline = Date.now() + 30_000; !url && !closed && Date.now() < deadline; ) {
    url = loginUrlIn(stderr + stdout, issuer);
    if (!url) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (url) {
    if (options.drive) await options.drive(url);
    else browser = await loginInBrowser(url);
  }
  const timer = setTimeout(() => child.kill('SIGTERM'), options.drive ? 5_000 : 30_000);
  const code = await exited;
  clearTimeout(timer);
  transcript.push(stdout, stderr);
  return { code, stdout, stderr: unwrap(stderr), ...(browser ? { browser } : {}) };
}

/** The token record ringfence keeps for `name` (the 0600 file in the home), read as the gateway does. */
export function heldRecord(home: string, name: string): Promise<OAuthEntry | undefined> {
  return new OAuthTokenStore(home).get(name);
}

/** Every secret the home's token file holds (tokens and client secrets of every record). */
export async function heldSecrets(home: string): Promise<string[]> {
  const text = await readFile(join(home, 'oauth-tokens.json'), 'utf8').catch(() => '');
  const found: string[] = [];
  const walk = (value: unknown, key = ''): void => {
    if (typeof value === 'string') {
      if (/^(access_token|refresh_token|client_secret)$/.test(key)) found.push(value);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k);
    }
  };
  if (text) walk(JSON.parse(text));
  return found;
}

/** The authorization code and state in a URL ringfence's callback received. */
export const codeOf = (url: string | undefined): string | undefined =>
  url ? (new URL(url).searchParams.get('code') ?? undefined) : undefined;

/** The files of a home a person (or a log shipper) reads: the audit log and the registrations. */
export async function readableFiles(home: string): Promise<string> {
  const read = (file: string) => readFile(join(home, file), 'utf8').catch(() => '');
  return `${await read('audit.jsonl')}\n${await read('mcp-servers.json')}`;
}

/** The secrets of `secrets` found in `text` (each named by its first characters only). */
export function leaked(text: string, secrets: readonly string[]): string[] {
  return secrets
    .filter((s) => s.length >= 8 && text.includes(s))
    .map((s) => `${s.slice(0, 6)}… (${s.length} chars)`);
}
