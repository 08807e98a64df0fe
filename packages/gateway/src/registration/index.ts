export { RegistrationError, type RegistrationErrorCode } from './errors.js';
export {
  type ContainerDraft,
  egressFromFlags,
  type ImageSource,
  parseKeyValues,
  parseMounts,
  planRegistration,
  type RegistrationInput,
  type RegistrationPlan,
} from './plan.js';
export { checkRegistrationAgainstPolicy, type RegistrationPolicy } from './policy.js';
export { type PullOptions, type PullResult, pullServer, pullSummary } from './pull.js';
export {
  buildNpmImage,
  clientRequestsOf,
  inspectLocalImage,
  type NpmImageOptions,
  type RegisterOptions,
  registerServer,
  registrationSummary,
  withImage,
} from './register.js';
