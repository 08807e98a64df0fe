import type { AuditLogLine } from './tail.js';

const short = (digest: string | null) => (digest ? `${digest.slice(0, 19)}…` : 'no-digest');

/**
 * One human line per entry: seq, time, type, then what matters for that type (server/tool,
 * verdict and rule for decisions; parent and outcome for results; host:port for egress).
 */
export function describeAuditLine(line: AuditLogLine): string {
  const entry = line.entry;
  if (!entry) return `     ?  (not an entry of a known shape)  ${line.raw.slice(0, 120)}`;
  const who = [entry.agent && `agent=${entry.agent}`, entry.scope && `scope=${entry.scope}`].filter(Boolean);
  let detail: string;
  switch (entry.type) {
    case 'gateway.start': {
      const { pid, version, policy } = entry.refs;
      detail = [
        `session=${entry.session}`,
        `pid=${pid}`,
        version && `version=${version}`,
        policy && `policy=${policy.name}`,
      ]
        .filter(Boolean)
        .join(' ');
      break;
    }
    case 'mcp.decision': {
      const r = entry.refs;
      detail = [
        r.phase.padEnd(6),
        `${r.server}/${r.tool}`,
        r.allowed ? 'allowed' : 'REFUSED',
        `rule=${r.rule}`,
        r.reason && `(${r.reason})`,
        r.phase === 'call' && `args=${short(r.arguments ?? null)}`,
      ]
        .filter(Boolean)
        .join('  ');
      break;
    }
    case 'mcp.result': {
      const r = entry.refs;
      const cancelled = r.cancelled ? `  cancelled by the ${r.cancelled}` : '';
      detail = `${r.server}/${r.tool}  ${r.is_error ? 'error' : 'ok'}${cancelled}  for #${entry.parent_seq}  result=${short(r.result)}`;
      break;
    }
    case 'mcp.egress': {
      const r = entry.refs;
      detail = [
        r.server,
        `${r.host}:${r.port}`,
        r.allowed ? 'allowed' : 'REFUSED',
        r.status !== undefined && String(r.status),
        r.reason,
      ]
        .filter(Boolean)
        .join('  ');
      break;
    }
  }
  return [String(entry.seq).padStart(6), entry.ts, entry.type.padEnd(13), detail, ...who].join('  ');
}
