import { createHash, randomBytes } from 'node:crypto';
import { canonicalize } from '@ringfence/policy';

/**
 * What a retry must repeat for its `requestState` to count: the method, what it names (a tool or
 * prompt name, a URI) and the arguments, as one digest. A state issued for one call is refused on
 * any other, so an answer (or a person's approval) given for `delete {path: "a"}` never carries
 * over to `delete {path: "b"}`. Arguments that cannot be made canonical JSON get a digest nothing
 * else has, so they never match.
 */
export function callDigest(method: string, target: string, args: unknown): string {
  let json: string;
  try {
    json = canonicalize([method, target, args ?? {}]);
  } catch {
    return `unmatchable:${randomBytes(18).toString('base64url')}`;
  }
  return createHash('sha256').update(json).digest('base64url');
}
