import { resolveHome } from '@ringfence/gateway';
import { loadInstalledPolicy, orgPins } from '@ringfence/policy';

/**
 * When the organisation policy pins a server, nothing may be approved or reset locally; a
 * policy that is installed but does not verify stops approvals too (fail closed).
 * Returns the refusal message, or undefined when local pins count for this server.
 */
export async function orgPinRefusal(server: string): Promise<string | undefined> {
  const installed = await loadInstalledPolicy({ home: resolveHome(), recordState: false });
  if (!installed.ok) {
    return `The installed organisation policy does not verify (${installed.code}: ${installed.message}); nothing can be approved until it is fixed. Run: ringfence doctor`;
  }
  if (!installed.present) return undefined;
  if (orgPins(installed.policy, server) === undefined) return undefined;
  return `The organisation policy "${installed.policy.name}" (version ${installed.policy.version}) pins the tools of ${server}: only its pins count and nothing can be approved or reset locally. Ask your policy admin to pin the new definition (its digest is shown by: ringfence mcp tools).`;
}
