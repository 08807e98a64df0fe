import type { ImageIdentity } from '@ringfence/policy';
import type Docker from 'dockerode';
import type { EgressRule, ServerConfig } from '../config/servers.js';
import { imageIdentity } from '../runtime/image-check.js';
import { RegistrationError } from './errors.js';

/** What registration asks of the organisation policy (the gateway's PolicyView answers it). */
export interface RegistrationPolicy {
  /** The egress a new server gets when it names no hosts. */
  readonly defaultEgress: 'deny' | 'any';
  imageRefusal(image: ImageIdentity): string | undefined;
  egressRefusal(server: string, egress: EgressRule): string | undefined;
}

/**
 * Registration against the organisation policy: the image must be allowed (by name, or by content
 * for digest entries) and the egress rule must fit under the server's ceiling. The refusal names
 * the policy and what it allows.
 */
export function checkRegistrationAgainstPolicy(
  policy: RegistrationPolicy,
  server: ServerConfig,
  image?: Docker.ImageInspectInfo,
): void {
  if (server.transport !== 'container') return;
  const refusal =
    (image ? policy.imageRefusal(imageIdentity(server.image, image)) : undefined) ??
    policy.egressRefusal(server.name, server.egress);
  if (refusal) throw new RegistrationError('REGISTRATION_POLICY', refusal);
}
