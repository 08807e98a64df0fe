import { RingfenceError } from '@ringfence/policy';

export type GatewayErrorCode =
  | 'ENGINE_UNREACHABLE'
  | 'ENGINE_CONFIG'
  | 'IMAGE_BUILD_FAILED'
  | 'IMAGE_CONTEXT'
  | 'NPM_FETCH'
  | 'HOME_INSECURE';

/** Local (non-wire) errors of the gateway library. */
export class GatewayError extends RingfenceError<GatewayErrorCode> {}
