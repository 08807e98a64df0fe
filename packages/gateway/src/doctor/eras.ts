import { EraStore, type EraVerdict, LEGACY_VERDICT_HORIZON_MS, registrationDigest } from '../config/eras.js';
import { type ServerConfig, ServerStore } from '../config/servers.js';
import { resolveHome } from '../home/home.js';

/** The doctor's check for the eras (a `DoctorCheck`; declared here, as doctor.ts imports this file). */
export interface ErasCheck {
  readonly id: 'upstream-eras';
  readonly title: string;
  readonly status: 'ok' | 'warn';
  readonly required: false;
  readonly summary: string;
  readonly fix?: string;
}

/** How a 2026 server's 2025 clients are served, as people read it (empty until learnt). */
export function legacyClientsNote(how: '2025' | '2026' | undefined): string {
  if (how === '2025') return ' (2025 to 2025 clients)';
  if (how === '2026') return ' (2026-07-28 to 2025 clients too: it offers no 2025 session)';
  return '';
}

/** One server's era as people read it. */
export function eraLine(server: ServerConfig, verdict: EraVerdict | undefined, now = Date.now()): string {
  if (!verdict) return `${server.name}: not probed yet (at its next start)`;
  if (verdict.registration !== registrationDigest(server))
    return `${server.name}: registration changed since it was probed (probed again at its next start)`;
  const since = verdict.checked_at.slice(0, 10);
  if (verdict.era === 'modern')
    return `${server.name}: MCP 2026-07-28 (modern, server/discover; since ${since})${legacyClientsNote(verdict.legacy_clients)}`;
  const stale = now - Date.parse(verdict.checked_at) > LEGACY_VERDICT_HORIZON_MS;
  return `${server.name}: MCP 2025 (legacy, initialize; since ${since}${stale ? ', probed again at its next start' : ''})`;
}

/**
 * Which protocol era each registered server speaks, as last probed (`upstream-eras.json`). Never
 * required: a server without a verdict is probed at its next start.
 */
export async function checkEras(env: { readonly env: NodeJS.ProcessEnv }): Promise<ErasCheck> {
  const base = { id: 'upstream-eras', title: 'Upstream protocol eras', required: false } as const;
  const home = resolveHome(env.env);
  let servers: ServerConfig[];
  try {
    servers = await new ServerStore(home).list();
  } catch (error) {
    return {
      ...base,
      status: 'warn',
      summary: `the registered servers cannot be read: ${(error as Error).message}`,
    };
  }
  if (servers.length === 0) return { ...base, status: 'ok', summary: 'no servers registered' };
  const store = new EraStore(home);
  let verdicts: Readonly<Record<string, EraVerdict>>;
  try {
    verdicts = await store.all();
  } catch (error) {
    return {
      ...base,
      status: 'warn',
      summary: `${(error as Error).message.split('. ')[0]}; every server is probed again at its next start`,
      fix: `mv '${store.path}' '${store.path}.broken'`,
    };
  }
  return {
    ...base,
    status: 'ok',
    summary: servers.map((server) => eraLine(server, verdicts[server.name])).join('; '),
  };
}
