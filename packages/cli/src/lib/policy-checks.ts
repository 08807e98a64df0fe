import { imageIdentity, type PolicyView, type ServerConfig } from '@ringfence/gateway';
import type Docker from 'dockerode';

/**
 * Registration against the organisation policy: the image must be allowed (by name, or by content
 * for digest entries) and the egress rule must fit under the server's ceiling. Throws the
 * refusal, which names the policy and what it allows.
 */
export function checkRegistrationAgainstPolicy(
  policy: PolicyView,
  server: ServerConfig,
  image?: Docker.ImageInspectInfo,
): void {
  if (server.transport !== 'container') return;
  const refusal =
    (image ? policy.imageRefusal(imageIdentity(server.image, image)) : undefined) ??
    policy.egressRefusal(server.name, server.egress);
  if (refusal) throw new Error(refusal);
}
