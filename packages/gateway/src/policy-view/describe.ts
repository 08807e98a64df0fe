/** name, version, expiry and signer keyids of a verified policy, for people. */
export function describePolicy(verified: {
  policy: { name: string; version: number };
  expiresAt: number;
  signers: readonly string[];
}): string {
  const days = Math.floor((verified.expiresAt - Date.now()) / 86_400_000);
  return `${verified.policy.name} version ${verified.policy.version}, expires ${new Date(verified.expiresAt).toISOString()} (in ${days} days), signed by ${verified.signers.map((k) => k.slice(0, 12)).join(', ')}`;
}
