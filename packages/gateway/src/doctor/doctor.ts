import { type InstalledPolicyResult, installedPolicyDir, loadInstalledPolicy } from '@ringfence/policy';
import type Docker from 'dockerode';
import { type HomeInspection, inspectHome, resolveHome } from '../home/home.js';
import { repoTags } from '../images/build.js';
import { findSidecarImage } from '../images/sidecar.js';
import { describePolicy } from '../policy-view/describe.js';
import {
  createDockerClient,
  describeEngine,
  ENGINE_FIX_HINT,
  type EngineEndpoint,
  type EngineInfo,
  engineRefusal,
  probeEngine,
  resolveEngineEndpoint,
} from '../runtime/engine.js';
import { redactText } from '../text/redact.js';
import { checkCredentials } from './credentials.js';
import { CVE_2024_29018_FIXED, internalDnsVerdict } from './engine-dns.js';
import {
  checkEngineLimits,
  type EngineDefaultLimits,
  type HostLimitFacts,
  probeEngineDefaultLimits,
  readHostLimitFacts,
} from './engine-limits.js';
import { checkEras } from './eras.js';
import { checkOAuthLogins } from './oauth-logins.js';

export { describePolicy };

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface DoctorCheck {
  readonly id:
    | 'node'
    | 'engine'
    | 'engine-dns'
    | 'engine-contract'
    | 'engine-limits'
    | 'home'
    | 'policy'
    | 'images'
    | 'upstream-eras'
    | 'oauth-logins'
    | 'credentials';
  readonly title: string;
  readonly status: CheckStatus;
  /** A failed required check makes `ringfence doctor` exit 1. */
  readonly required: boolean;
  readonly summary: string;
  /** What to run to fix it, when status is not ok. */
  readonly fix?: string;
}

export interface DoctorReport {
  readonly ok: boolean;
  readonly checks: readonly DoctorCheck[];
}

/** Everything the doctor reads from the outside world, so each check can be tested alone. */
export interface DoctorEnvironment {
  readonly env: NodeJS.ProcessEnv;
  readonly nodeVersion: string;
  readonly engine: () => Promise<{ endpoint: EngineEndpoint; info: EngineInfo; docker: Docker }>;
  readonly inspectHome: (path: string) => Promise<HomeInspection>;
  readonly loadPolicy: () => Promise<InstalledPolicyResult>;
  /** This host's hard process limits and whether they may be raised. */
  readonly hostLimits: () => HostLimitFacts;
  /** The limits the engine gives a container that names none (it creates and removes one). */
  readonly engineDefaultLimits: (docker: Docker) => Promise<EngineDefaultLimits>;
}

export const MIN_NODE = [20, 19] as const;

export function systemDoctorEnvironment(env: NodeJS.ProcessEnv = process.env): DoctorEnvironment {
  return {
    env,
    nodeVersion: process.versions.node,
    engine: async () => {
      const endpoint = resolveEngineEndpoint(env);
      const docker = createDockerClient(endpoint);
      return { endpoint, docker, info: await probeEngine(docker, endpoint) };
    },
    inspectHome: (path) => inspectHome(path),
    // Read-only: the doctor never records a policy version as seen.
    loadPolicy: () =>
      loadInstalledPolicy({ dir: installedPolicyDir(env), home: resolveHome(env), recordState: false }),
    hostLimits: readHostLimitFacts,
    engineDefaultLimits: probeEngineDefaultLimits,
  };
}

export function checkNode(version: string): DoctorCheck {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return {
    id: 'node',
    title: 'Node.js',
    required: true,
    status: ok ? 'ok' : 'fail',
    summary: ok ? `v${version}` : `v${version} is older than the v${MIN_NODE.join('.')} ringfence needs`,
    ...(ok
      ? {}
      : {
          fix: `Install Node.js ${MIN_NODE.join('.')} or newer (https://nodejs.org) and run ringfence doctor again.`,
        }),
  };
}

export async function checkHome(env: DoctorEnvironment): Promise<DoctorCheck> {
  const path = resolveHome(env.env);
  const base = { id: 'home', title: 'RINGFENCE_HOME', required: true } as const;
  let inspection: HomeInspection;
  try {
    inspection = await env.inspectHome(path);
  } catch (error) {
    return {
      ...base,
      status: 'fail',
      summary: `${path} cannot be read: ${(error as Error).message}`,
      fix: `Check the permissions of ${path}, or set RINGFENCE_HOME to a directory you own.`,
    };
  }
  if (!inspection.exists) {
    return {
      ...base,
      status: 'ok',
      summary: `${path} (not created yet; it is created with mode 0700 on first use)`,
    };
  }
  if (inspection.problems.length === 0)
    return { ...base, status: 'ok', summary: `${path} (0700, files 0600)` };
  return {
    ...base,
    status: 'fail',
    summary: inspection.problems.map((p) => p.problem).join('; '),
    fix: inspection.problems.map((p) => p.fix).join(' && '),
  };
}

export function policyDirectory(env: NodeJS.ProcessEnv): string {
  return installedPolicyDir(env);
}

/** Which organisation policy is in force: verified exactly as the gateway will verify it. */
export async function checkPolicyInstalled(env: DoctorEnvironment): Promise<DoctorCheck> {
  const base = { id: 'policy', title: 'Organisation policy', required: false } as const;
  const installed = await env.loadPolicy();
  if (!installed.ok) {
    return {
      ...base,
      required: true,
      status: 'fail',
      summary: `installed but refused (${installed.code}): ${installed.message}`,
      fix: 'Install a valid policy with: sudo ringfence policy install POLICY --root ROOT (the gateway will not start until then)',
    };
  }
  if (!installed.present)
    return { ...base, status: 'ok', summary: `none installed in ${installed.dir} (local rules only)` };
  return { ...base, status: 'ok', summary: describePolicy(installed) };
}

/**
 * CVE-2024-29018 (docs/containers.md, "DNS"): whether this engine forwards DNS queries from
 * internal networks to the host's resolver, what to do, and what ringfence does meanwhile.
 */
export function checkEngineDns(info: Pick<EngineInfo, 'kind' | 'version'>): DoctorCheck {
  const base = { id: 'engine-dns', title: 'Engine DNS (CVE-2024-29018)', required: false } as const;
  const verdict = internalDnsVerdict(info);
  if (verdict === 'not-docker')
    return { ...base, status: 'ok', summary: `${info.kind} ${info.version} is not affected` };
  if (verdict === 'fixed') return { ...base, status: 'ok', summary: `docker ${info.version} has the fix` };
  const upgrade = `Upgrade the engine to Docker ${CVE_2024_29018_FIXED[0]} or newer (${CVE_2024_29018_FIXED.slice(1).join(' or ')} on those release lines).`;
  if (verdict === 'unknown') {
    return {
      ...base,
      status: 'warn',
      summary: `cannot tell from the engine version "${info.version}" whether it has the fix`,
      fix: `Check with: docker version. ${upgrade}`,
    };
  }
  return {
    ...base,
    status: 'warn',
    summary: `docker ${info.version} has it: when the host's resolver is on loopback (systemd-resolved, dnsmasq), it forwards lookups from internal networks to it, so a container with no route out can still send data out in DNS queries`,
    fix: `${upgrade} Until then ringfence gives servers with an egress allowlist no resolver but their own container, so their lookups cannot leave; other containers on internal networks of this engine stay exposed.`,
  };
}

/**
 * What this engine cannot contain (docs/runtimes.md): servers it would refuse, per egress mode.
 * A warning: the gateway runs, and refuses those servers with the same words when they start.
 */
export function checkEngineContract(info: EngineInfo): DoctorCheck {
  const base = { id: 'engine-contract', title: 'Container contract', required: false } as const;
  const refused = (['deny', 'allow', 'any'] as const).filter((mode) => engineRefusal(info, mode));
  if (refused.length === 0) {
    return {
      ...base,
      status: 'ok',
      summary: info.mode
        ? `${describeEngine(info)} keeps it for every egress mode`
        : `${describeEngine(info)} did not say whether it runs rootless; assumed rootful`,
    };
  }
  const reasons = [...new Set(refused.map((mode) => engineRefusal(info, mode)!))];
  const which = refused.length === 3 ? 'every server' : `servers with egress ${refused.join(', ')}`;
  return {
    ...base,
    status: 'warn',
    summary: `${which} will be refused on this engine: ${reasons.map((r) => r.split('. ')[0]).join('; ')}`,
    fix: reasons.map((r) => r.slice(r.indexOf('. ') + 2)).join(' '),
  };
}

/** Run every check; the engine is asked once, and the image check only when it answered. */
export async function runDoctor(env: DoctorEnvironment = systemDoctorEnvironment()): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [checkNode(env.nodeVersion)];
  let docker: Docker | undefined;
  try {
    const engine = await env.engine();
    docker = engine.docker;
    checks.push({
      id: 'engine',
      title: 'Container engine',
      required: true,
      status: 'ok',
      summary: `${describeEngine(engine.info)} (API ${engine.info.apiVersion}) at ${engine.endpoint.host}${engine.endpoint.source === 'default-socket' ? ' (found; set DOCKER_HOST to choose another)' : ''}`,
    });
    checks.push(checkEngineDns(engine.info));
    checks.push(checkEngineContract(engine.info));
    const engineDefaults = await env
      .engineDefaultLimits(engine.docker)
      .catch((error: Error) => ({ unknown: `the engine would not say (${error.message})` }));
    checks.push(checkEngineLimits(engine.info, engine.endpoint, env.hostLimits(), engineDefaults));
  } catch (error) {
    checks.push({
      id: 'engine',
      title: 'Container engine',
      required: true,
      status: 'fail',
      summary: (error as Error).message.split('. ')[0] ?? String(error),
      fix: ENGINE_FIX_HINT,
    });
  }
  checks.push(await checkHome(env));
  checks.push(await checkPolicyInstalled(env));
  if (docker) checks.push(await checkImages(docker));
  checks.push(await checkEras(env));
  checks.push(await checkOAuthLogins(env));
  checks.push(await checkCredentials(env));
  return { ok: checks.every((c) => c.status !== 'fail' || !c.required), checks: checks.map(redacted) };
}

/**
 * A check as it is shown: its words through the one redactor, since they quote what they found
 * (DOCKER_HOST with a user:password@, an engine's or the file system's own error messages).
 */
function redacted(check: DoctorCheck): DoctorCheck {
  return {
    ...check,
    summary: redactText(check.summary),
    ...(check.fix !== undefined ? { fix: redactText(check.fix) } : {}),
  };
}

async function checkImages(docker: Docker): Promise<DoctorCheck> {
  const base = { id: 'images', title: 'Offline images', required: false } as const;
  try {
    // Labels are inherited by images built on top, so match the repository names too.
    const tagsOf = async (label: string, repository: string) =>
      (await docker.listImages({ filters: { label: [`ringfence.image=${label}`] } }))
        .flatMap((image) => repoTags(image))
        .filter((tag) => tag.startsWith(`${repository}:`))
        .sort();
    const nodeBase = await tagsOf('node-base', 'ringfence/node-base');
    // The sidecar exactly as the runtime will choose it, so "ok" here means it will be used.
    const sidecar = await findSidecarImage(docker);
    const missing = [
      ...(nodeBase.length ? [] : ['the Node base image']),
      ...(sidecar ? [] : ['the egress sidecar']),
    ];
    if (missing.length === 0) return { ...base, status: 'ok', summary: `${nodeBase.at(-1)}, ${sidecar}` };
    return {
      ...base,
      status: 'warn',
      summary: `not built yet: ${missing.join(' and ')}`,
      fix: 'ringfence images build',
    };
  } catch (error) {
    return {
      ...base,
      status: 'warn',
      summary: `could not list images: ${(error as Error).message}`,
      fix: 'ringfence images build',
    };
  }
}
