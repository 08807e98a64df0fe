import { redactText, redactUrl } from '../text/redact.js';
import { clip, rendered } from '../text/render.js';
import type { AuditLogLine } from './tail.js';

const short = (digest: string | null) => (digest ? `${digest.slice(0, 19)}…` : 'no-digest');

/**
 * Every field of an entry may hold what a server chose (a tool name, a host, a reason that quotes
 * it), and anyone who can write the file chose all of it: names are rendered so that they hold no
 * space, newline or terminal escape, and free text on one line. A tool named "x\n… allowed …" then
 * cannot print a second, made-up entry, nor hide the real one.
 */
const name = (text: string | number | undefined) => rendered(String(text ?? ''), 'name');
/** Free text (a reason) may quote a URL with its token or a header: redacted, then rendered once. */
const prose = (text: string) => rendered(redactText(text), 'line');
/**
 * `docs/search` for a tool, `docs/prompt greet` for a prompt, and the request when it is not the
 * one the kind implies (`docs/prompt greet completion/complete`); each part rendered as a name.
 */
const subject = (r: { server: string; tool: string; kind?: string; method?: string }) =>
  // A server's instructions have one name: `docs/instructions`, as `pins diff` names them.
  r.kind === 'instructions' && r.tool === 'instructions'
    ? `${name(r.server)}/instructions`
    : `${name(r.server)}/${r.kind ? `${name(r.kind)} ` : ''}${name(r.kind === 'resource' || r.kind === 'template' ? redactUrl(r.tool) : r.tool)}${r.method ? ` ${name(r.method)}` : ''}`;

/**
 * One human line per entry: seq, time, type, then what matters for that type (server/tool,
 * verdict and rule for decisions; parent and outcome for results; host:port for egress).
 */
export function describeAuditLine(line: AuditLogLine): string {
  const entry = line.entry;
  if (!entry) return `     ?  (not an entry of a known shape)  ${prose(clip(line.raw, 120))}`;
  const who = [
    entry.agent && `agent=${name(entry.agent)}`,
    entry.scope && `scope=${name(entry.scope)}`,
  ].filter(Boolean);
  let detail: string;
  switch (entry.type) {
    case 'gateway.start': {
      const { pid, version, policy } = entry.refs;
      detail = [
        `session=${name(entry.session)}`,
        `pid=${pid}`,
        version && `version=${name(version)}`,
        policy && `policy=${name(policy.name)}`,
      ]
        .filter(Boolean)
        .join(' ');
      break;
    }
    case 'mcp.decision': {
      const r = entry.refs;
      detail = [
        r.phase.padEnd(6),
        subject(r),
        r.allowed ? 'allowed' : 'REFUSED',
        `rule=${name(r.rule)}`,
        r.reason && `(${prose(r.reason)})`,
        r.phase === 'call' && `args=${short(r.arguments ?? null)}`,
        r.task && `task=${name(r.task)}`,
      ]
        .filter(Boolean)
        .join('  ');
      break;
    }
    case 'mcp.result': {
      const r = entry.refs;
      const cancelled = r.cancelled ? `  cancelled by the ${r.cancelled}` : '';
      detail = `${subject(r)}  ${r.is_error ? 'error' : 'ok'}${cancelled}  for #${entry.parent_seq}  result=${short(r.result)}${r.dropped ? `  dropped=${r.dropped}` : ''}${r.task ? `  task=${name(r.task)}` : ''}`;
      break;
    }
    case 'mcp.server_request': {
      const r = entry.refs;
      detail = [
        name(r.server),
        name(r.method),
        r.allowed ? 'passed on' : 'REFUSED',
        `rule=${name(r.rule)}`,
        r.reason && `(${prose(r.reason)})`,
        `request=${short(r.request)}`,
      ]
        .filter(Boolean)
        .join('  ');
      break;
    }
    case 'mcp.server_answer': {
      const r = entry.refs;
      detail = `${name(r.server)}  ${name(r.method)}  ${r.is_error ? 'error' : 'answered'}  for #${entry.parent_seq}  answer=${short(r.answer)}${r.reason ? `  (${prose(r.reason)})` : ''}`;
      break;
    }
    case 'mcp.task': {
      const r = entry.refs;
      detail = [
        `tasks/${r.op}`,
        r.server && r.tool ? subject({ server: r.server, tool: r.tool }) : undefined,
        r.allowed ? 'done' : 'REFUSED',
        `task=${name(r.task)}`,
        `(${prose(r.reason)})`,
      ]
        .filter(Boolean)
        .join('  ');
      break;
    }
    case 'mcp.oauth': {
      const r = entry.refs;
      detail = [
        name(r.server),
        `token ${r.event}`,
        r.token && `token=${r.token}`,
        r.previous && `previous=${r.previous}`,
        r.status !== undefined && String(r.status),
        r.reason && `(${prose(r.reason)})`,
      ]
        .filter(Boolean)
        .join('  ');
      break;
    }
    case 'mcp.egress': {
      const r = entry.refs;
      detail = [
        name(r.server),
        `${name(r.host)}:${r.port}`,
        r.allowed ? 'allowed' : 'REFUSED',
        r.status !== undefined && String(r.status),
        prose(r.reason),
      ]
        .filter(Boolean)
        .join('  ');
      break;
    }
  }
  return [String(entry.seq).padStart(6), name(entry.ts), entry.type.padEnd(13), detail, ...who].join('  ');
}
