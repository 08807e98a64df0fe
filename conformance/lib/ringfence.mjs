// The fixture behind `ringfence mcp serve --http`, as a user would set it up: a fresh
// RINGFENCE_HOME (and an empty policy directory, so no installed organisation policy on this
// machine changes what is measured), the fixture registered as a remote loopback server, the
// gateway serving streamable HTTP with a token from RINGFENCE_MCP_TOKEN, and the bearer-token
// proxy in front of it for the suite (lib/auth-proxy.mjs says why).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAuthProxy } from './auth-proxy.mjs';
import { runToEnd, startUntil, stop } from './processes.mjs';

export const CLI = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'packages',
  'cli',
  'bin',
  'run.js',
);

/** Does this build's `mcp serve` have --only (serve one server's features under their own names)? */
export async function serveHasOnly(env) {
  const help = await runToEnd(process.execPath, [CLI, 'mcp', 'serve', '--help'], { env });
  if (help.code !== 0) {
    throw new Error(
      `ringfence mcp serve --help failed (${help.code}); is the CLI built (npm run build)?\n${help.stderr}`,
    );
  }
  return /^\s*--only\b/m.test(help.stdout);
}

/**
 * The sampling and elicitation requests the fixture sent through the gateway, as its audit log
 * recorded them: how many were passed on and how many refused, by rule.
 */
export function serverRequestsAudited(home) {
  let text = '';
  try {
    text = readFileSync(join(home, 'audit.jsonl'), 'utf8');
  } catch {}
  const counts = { passed: 0, refused: 0, rules: /** @type {Record<string, number>} */ ({}) };
  for (const line of text.split('\n')) {
    if (!line) continue;
    const entry = JSON.parse(line);
    if (entry.type !== 'mcp.server_request') continue;
    if (entry.refs.allowed) counts.passed++;
    else counts.refused++;
    counts.rules[entry.refs.rule] = (counts.rules[entry.refs.rule] ?? 0) + 1;
  }
  return counts;
}

/**
 * Register `fixtureUrl` as server `name` in a fresh home and serve it; `allow` registers it with
 * --allow-sampling and --allow-elicitation, `protocol` with --protocol (e.g. 2025). Resolves to { url, mode, home, gatewayOutput,
 * serverRequests, close }: `url` is the proxy's, `mode` is 'only' or 'prefixed', and
 * `serverRequests()` reads the gateway's audit of sampling and elicitation (before `close`).
 */
export async function serveThroughRingfence({
  fixtureUrl,
  name,
  allow = false,
  protocol = '',
  startTimeoutMs = 120_000,
}) {
  const home = mkdtempSync(join(tmpdir(), 'ringfence-conformance-home-'));
  const policyDir = mkdtempSync(join(tmpdir(), 'ringfence-conformance-policy-'));
  const token = randomBytes(32).toString('hex');
  /** @type {NodeJS.ProcessEnv} */
  const env = {
    ...process.env,
    RINGFENCE_HOME: home,
    RINGFENCE_POLICY_DIR: policyDir,
    RINGFENCE_MCP_TOKEN: token,
  };
  delete env.RINGFENCE_AGENT_TOKEN;
  const cleanups = [
    () => rmSync(home, { recursive: true, force: true }),
    () => rmSync(policyDir, { recursive: true, force: true }),
  ];
  // Last started, first stopped: the proxy, the gateway, then the directories.
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    const asks = [
      ...(allow ? ['--allow-sampling', '--allow-elicitation'] : []),
      ...(protocol ? ['--protocol', protocol] : []),
    ];
    const added = await runToEnd(process.execPath, [CLI, 'mcp', 'add', name, '--url', fixtureUrl, ...asks], {
      env,
    });
    if (added.code !== 0) {
      throw new Error(
        `ringfence mcp add ${name} --url ${fixtureUrl} ${asks.join(' ')} failed (${added.code}):\n${added.stderr}${added.stdout}`,
      );
    }
    const only = await serveHasOnly(env);
    const gateway = await startUntil(
      process.execPath,
      [CLI, 'mcp', 'serve', '--http', '127.0.0.1:0', ...(only ? ['--only', name] : [])],
      { env, ready: /^ringfence: listening on (http:\/\/\S+)$/, timeoutMs: startTimeoutMs },
    );
    cleanups.push(() => stop(gateway.child));
    const proxy = await startAuthProxy({ target: gateway.match[1], token });
    cleanups.push(() => proxy.close());
    return {
      url: proxy.url,
      gatewayUrl: gateway.match[1],
      mode: only ? 'only' : 'prefixed',
      home,
      gatewayOutput: gateway.output,
      serverRequests: () => serverRequestsAudited(home),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
