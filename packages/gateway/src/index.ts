export {
  type CheckStatus,
  checkHome,
  checkNode,
  checkPolicyInstalled,
  type DoctorCheck,
  type DoctorEnvironment,
  type DoctorReport,
  policyDirectory,
  runDoctor,
  systemDoctorEnvironment,
} from './doctor/doctor.js';
export { GatewayError, type GatewayErrorCode } from './errors.js';
export { type HomeInspection, type HomeProblem, inspectHome, resolveHome } from './home/home.js';
export {
  type BuildRequest,
  type BuiltImage,
  buildContextImage,
  CONTENT_LABEL,
  contentTag,
} from './images/build.js';
export { type ContextFile, contextDigest, type ImageContext, packContext } from './images/context.js';
export {
  buildNodeBaseImage,
  discoverNodeBaseInputs,
  NODE_BASE_REPOSITORY,
  type NodeBaseInputs,
  parseLddOutput,
  planNodeBaseContext,
} from './images/node-base.js';
export {
  createDockerClient,
  defaultSocketCandidates,
  type EngineEndpoint,
  type EngineInfo,
  probeEngine,
  resolveEngineEndpoint,
} from './runtime/engine.js';
