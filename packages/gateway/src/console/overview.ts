/**
 * What the console's Servers, Reviews and Policy views show, read from the files of a home and
 * never written: `mcp-servers.json`, `mcp-pins.json`, the installed policy (verified, with
 * nothing recorded), and the last gateway start in the audit log. Every string a server, a
 * registration or a policy author chose passes `renderUntrusted` here, so the page receives text
 * whose invisible and control characters are already shown as `\u{HEX}` (docs/untrusted-text.md);
 * the page then sets it only as text.
 */
import { loadInstalledPolicy, summarizePolicy } from '@ringfence/policy';
import type { ServerConfig } from '../config/servers.js';
import { ServerStore } from '../config/servers.js';
import { DEFINITION_KINDS, type DefinitionKind, textMember } from '../pins/kinds.js';
import { type DefinitionDiff, diffPending } from '../pins/reconcile.js';
import { PinStore, pendingOf, pinnedOf } from '../pins/store.js';
import { describePolicy } from '../policy-view/describe.js';
import { redactImage, redactUrl } from '../text/redact.js';
import { escapedCharacterCount, type RenderMode, renderJsonText, renderUntrusted } from '../text/render.js';
import type {
  GatewayRun,
  Overview,
  PolicyPanel,
  ReviewSide,
  ReviewView,
  ServerView,
  ShownText,
} from './api.js';

const show = (text: string, mode: RenderMode = 'block'): ShownText => renderUntrusted(text, { mode });

/** The image or the URL through the one redactor (a registry reference may carry userinfo too). */
function targetOf(server: ServerConfig): string {
  return server.transport === 'container' ? redactImage(server.image) : redactUrl(server.url);
}

function egressOf(server: ServerConfig): string {
  if (server.transport !== 'container') return 'remote: reached directly by the gateway (no sidecar)';
  const { mode, hosts = [], addresses = [] } = server.egress;
  if (mode !== 'allow') return mode === 'deny' ? 'deny: no network' : 'any: every host';
  return `allow ${[...hosts, ...addresses].join(', ') || '(nothing listed)'}`;
}

/** A name as a shell word: single-quoted unless it is plainly safe. */
const shellWord = (word: string) =>
  /^[A-Za-z0-9_.@:/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * The command that approves one definition, when its name can be typed as shown; otherwise the
 * server-wide one (which still shows every definition before accepting it). Tools are positional
 * and every other kind has its flag, `--KIND NAME` (a server's instructions: `--instructions`).
 */
function approveCommands(server: string, diff: DefinitionDiff): string[] {
  const commands = [`ringfence mcp pins diff ${shellWord(server)}`];
  const typeable = renderUntrusted(diff.tool, { mode: 'name' }).escaped === 0;
  if (!typeable) return [...commands, `ringfence mcp pins approve ${shellWord(server)}`];
  const which =
    diff.definition === 'tool'
      ? shellWord(diff.tool)
      : diff.definition === 'instructions'
        ? '--instructions'
        : `--${diff.definition} ${shellWord(diff.tool)}`;
  return [...commands, `ringfence mcp pins approve ${shellWord(server)} ${which}`];
}

function side(
  definition: Readonly<Record<string, unknown>>,
  digest: string | undefined,
  kind: DefinitionKind,
): ReviewSide {
  // The prose shown as text: a description, or a server's instructions.
  const { [textMember(kind)]: description, ...rest } = Object.fromEntries(Object.entries(definition));
  const json = renderJsonText(JSON.stringify(rest, null, 2));
  return {
    ...(digest ? { digest } : {}),
    description: show(typeof description === 'string' ? description : '(no description)'),
    // JSON's own escapes (\u001b) and ours (\u{200B}) both hide a character: count them all.
    rest: { text: json.text, escaped: escapedCharacterCount(rest) },
  };
}

function gatewayLine(run: GatewayRun | undefined): string {
  if (!run) return 'No gateway has started with this home yet (no gateway.start in the audit log).';
  return run.alive
    ? `A gateway is running: pid ${run.pid}, session ${run.session}, since ${run.ts}.`
    : `No gateway is running now; the last one (pid ${run.pid}, session ${run.session}) started ${run.ts}.`;
}

export async function readOverview(home: string, run: GatewayRun | undefined): Promise<Overview> {
  const [servers, pins, installed] = await Promise.all([
    new ServerStore(home).list(),
    new PinStore(home).read(),
    loadInstalledPolicy({ home, recordState: false }),
  ]);
  const policyDoc = installed.ok && installed.present ? installed.policy : undefined;
  const serverViews = servers.map((server): ServerView => {
    const record = pins.servers[server.name];
    const count = (of: typeof pinnedOf) =>
      record ? DEFINITION_KINDS.reduce((n, kind) => n + Object.keys(of(record, kind)).length, 0) : 0;
    const decided = run?.exposure.get(server.name);
    const org = policyDoc?.mcp?.find((entry) => entry.server === server.name);
    const ceilings = [
      ...(server.allow_tools?.length ? [`tools allowed here: ${server.allow_tools.join(', ')}`] : []),
      ...(org
        ? [
            `policy tools allowed: ${org.allow_tools === undefined ? 'any' : org.allow_tools.join(', ') || 'none'}`,
            `policy network at most: ${org.egress_allow?.length ? org.egress_allow.join(', ') : (policyDoc?.default_egress ?? 'deny')}`,
            ...(org.max_call_seconds !== undefined ? [`policy call limit: ${org.max_call_seconds} s`] : []),
            ...(org.pins ? [`pinned by the policy: ${org.pins.length} definition(s)`] : []),
            ...(org.read_only_tools?.length ? [`read-only: ${org.read_only_tools.join(', ')}`] : []),
          ]
        : policyDoc
          ? [`policy: no entry for this server (network at most ${policyDoc.default_egress ?? 'deny'})`]
          : ['no organisation policy installed']),
    ];
    const state = !run
      ? 'never started'
      : !decided
        ? run.alive
          ? 'not serving: no decision about it since the running gateway started (failed to start? see: ringfence mcp ls --logs)'
          : 'stopped'
        : run.alive
          ? 'running'
          : 'stopped';
    return {
      name: show(server.name, 'name'),
      kind: server.transport === 'container' ? 'container' : 'remote',
      target: show(targetOf(server), 'line'),
      egress: show(egressOf(server), 'line'),
      mounts:
        server.transport === 'container'
          ? (server.mounts ?? []).map((m) =>
              show(`${m.path} (${m.mode === 'rw' ? 'read-write' : 'read-only'})`, 'line'),
            )
          : [],
      state: show(state, 'line'),
      exposed: (decided?.exposed ?? []).map((name) => show(name, 'name')),
      withheld: (decided?.withheld ?? []).map((w) =>
        show(`${w.name} (${w.rule}${w.reason ? `: ${w.reason}` : ''})`, 'line'),
      ),
      pinned: count(pinnedOf),
      ceilings: ceilings.map((c) => show(c, 'line')),
    };
  });
  const reviews = Object.keys(pins.servers)
    .sort()
    .flatMap((server) => {
      const record = pins.servers[server]!;
      return diffPending(record).map((diff): ReviewView => {
        const pin = pinnedOf(record, diff.definition)[diff.tool];
        const pending = pendingOf(record, diff.definition)[diff.tool]!;
        return {
          server: show(server, 'name'),
          definition: diff.definition,
          name: show(diff.tool, 'name'),
          change: diff.kind,
          ...(pin ? { before: side(pin.definition, pin.digest, diff.definition) } : {}),
          after: side(pending.definition, pending.digest, diff.definition),
          movedFields: diff.movedFields.map((field) => show(field, 'name')),
          commands: approveCommands(server, diff).map((c) => renderUntrusted(c, { mode: 'line' }).text),
        };
      });
    });
  const policy: PolicyPanel = !installed.ok
    ? {
        state: 'refused',
        summary: show(
          `The installed policy does not verify (${installed.code}): ${installed.message} The gateway will not start until this is fixed. Run: ringfence doctor`,
          'line',
        ),
        lines: [],
      }
    : installed.present
      ? {
          state: 'verified',
          summary: show(describePolicy(installed), 'line'),
          lines: summarizePolicy(installed, Date.now()).map((line) => show(line, 'line')),
        }
      : {
          state: 'none',
          summary: show('No organisation policy is installed: local rules only, every call allowed.', 'line'),
          lines: [],
        };
  return {
    home: show(home, 'line'),
    gateway: show(gatewayLine(run), 'line'),
    servers: serverViews,
    reviews,
    policy,
  };
}
