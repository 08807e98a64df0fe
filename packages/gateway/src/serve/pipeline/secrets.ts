/**
 * Arguments are egress, results are ingress (issue 27): the pipeline's two uses of the credential
 * scanner (credentials/scan/). Before a request is forwarded, every string of its arguments (keys
 * included) is scanned, and a secret not bound for the server called is refused, asked about or
 * let go, as the signed policy's `egress_secrets` says (absent: refused). After the result checks
 * and before the sanitiser, every string of the answer is scanned and each secret replaced by a
 * marker naming its class. Values never appear in a reply, a question or an audit entry: only
 * classes, credential ids and field paths.
 */

import { describeReach } from '../../credentials/scan/reach.js';
import type { EgressHit, Removed } from '../../credentials/scan/scanner.js';
import { AskDeferred } from '../../ports/caller.js';
import type { PolicyView } from '../../ports/policy.js';
import { rendered } from '../../text/render.js';
import { FORWARDED_METHODS, requestLabel } from './methods.js';
import type { ForwardedRequest, PipelineDeps, Refusal } from './types.js';

type EgressSetting = ReturnType<PolicyView['decideCall']>['egressSecrets'];

/** The most items an audit entry or a message lists; the rest are counted. */
const LISTED = 8;
const PATH_MAX = 120;

function shownPath(hit: EgressHit): string {
  const path = hit.path === '' ? '(the arguments)' : hit.path;
  const cut = path.length > PATH_MAX ? `${path.slice(0, PATH_MAX)}…` : path;
  return hit.split ? `${cut} (split across its strings)` : cut;
}

/** `aws at /a/b; generic (credential deploy) at /token`: for the audit entry (rendered where shown). */
export function describeHits(hits: readonly EgressHit[]): string {
  const items = hits
    .slice(0, LISTED)
    .map((h) => `${h.class}${h.credential ? ` (credential ${h.credential})` : ''} at ${shownPath(h)}`);
  const more = hits.length > LISTED ? `; and ${hits.length - LISTED} more` : '';
  return `${items.join('; ')}${more}`.slice(0, 1000);
}

const classesOf = (hits: readonly EgressHit[]): string => [...new Set(hits.map((h) => h.class))].join(', ');

/** Why these hits may not go, for the person and the model. */
function whyNot(hits: readonly EgressHit[], server: string): string {
  if (hits.some((h) => h.why === 'no-network'))
    return `${server} has no network, so no secret has anywhere legitimate to go from it`;
  if (hits.every((h) => h.why === 'not-bound'))
    return `the stored credential is not bound to ${server} (ringfence secret ls shows where each may go)`;
  return `no stored credential binds a key like this to ${server}`;
}

/**
 * The egress step. Passes (with a note for the decision entry when secrets were let go) or
 * refuses; with `ask`, a person is asked through the client, naming the server, where it can
 * send, and the class, never the value.
 */
export async function egressSecrets(
  deps: PipelineDeps,
  request: ForwardedRequest,
  args: Record<string, unknown>,
  setting: EgressSetting,
  rule: string,
): Promise<{ pass: true; secrets?: string } | Refusal> {
  const { server } = request.entry;
  const problem = deps.secrets.problem;
  if (problem) {
    return {
      pass: false,
      code: 'SECRETS_UNCHECKED',
      rule: 'egress-secrets',
      reason: problem,
      what: `${rendered(problem, 'line')}; nothing was sent.`,
    };
  }
  const hits = await deps.secrets.egress(args, server, request.upstream?.reach);
  if (hits.length === 0) return { pass: true };
  const secrets = describeHits(hits);
  const action = setting?.action ?? 'refuse';
  const whose =
    setting?.from === 'rule'
      ? `policy rule "${rendered(rule, 'name')}" (egress_secrets: ${action})`
      : setting?.from === 'policy'
        ? `the organisation policy (egress_secrets: ${action})`
        : 'ringfence (a secret not bound for a server is refused unless the policy says egress_secrets: ask or allow)';
  // A server with no network has nowhere legitimate to send a secret: no setting lets it go.
  const noNetwork = hits.some((h) => h.why === 'no-network');
  const refusal = (reason: string, what: string): Refusal => ({
    pass: false,
    code: 'EGRESS_SECRET',
    rule: setting?.from === 'rule' ? rule : 'egress-secrets',
    reason,
    what,
    next: 'Send the call without the secret. If it must go to this server, bind the credential to it (ringfence secret), or ask your policy admin.',
    secrets,
  });
  const shownWhere = [...new Set(hits.map((h) => rendered(shownPath(h), 'name')))]
    .slice(0, LISTED)
    .join(', ');
  const carried = `the arguments carry a secret (${classesOf(hits)}, at ${shownWhere}) and ${whyNot(hits, server)}`;
  if (noNetwork || action === 'refuse')
    return refusal(
      `${carried}; refused by ${noNetwork ? 'ringfence (no network)' : whose}`,
      `${carried}; refused by ${noNetwork ? 'ringfence' : whose}. Nothing was sent.`,
    );
  if (action === 'allow') return { pass: true, secrets };
  const handling = FORWARDED_METHODS[request.method].ask;
  if (handling.mode !== 'person' || !request.caller.ask) {
    const why = handling.mode === 'refuse' ? handling.why : 'this client cannot be asked';
    return refusal(
      `${carried}; a person must approve it and ${why}`,
      `${carried}; ${whose} needs a person to approve it, and ${why}. Nothing was sent.`,
    );
  }
  const what = requestLabel(request, (part) => rendered(part, 'name'));
  const question = `Allow ${what} to send a secret? Its arguments carry ${classesOf(hits)} (at ${shownWhere}), and ${whyNot(hits, server)}. It goes to ${rendered(server, 'name')}, which can reach ${rendered(describeReach(request.upstream?.reach), 'line')}. The value is not shown here.`;
  const answer = await request.caller.ask(question).catch((error: unknown) => {
    if (error instanceof AskDeferred) throw error;
    return 'cancel' as const;
  });
  if (answer !== 'accept')
    return refusal(
      `${carried}; the person answered ${answer}`,
      `${carried}; the person you asked did not approve sending it (${answer}). Nothing was sent.`,
    );
  return { pass: true, secrets: `${secrets} (approved by the person)`.slice(0, 1000) };
}

/** The result with every secret replaced by its marker, and what the result entry counts. */
export async function ingressSecrets(
  deps: PipelineDeps,
  reply: unknown,
): Promise<{ reply: unknown; redacted?: number; redactedClasses?: string }> {
  const { value, removed } = await deps.secrets.redact(reply);
  if (removed.size === 0) return { reply };
  return { reply: value, redacted: total(removed), redactedClasses: [...removed.keys()].sort().join(',') };
}

const total = (removed: Removed): number => [...removed.values()].reduce((a, b) => a + b, 0);
