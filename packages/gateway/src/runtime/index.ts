export { DockerContainedServer, stderrLogPath } from './contained-server.js';
export {
  DEFAULT_LIMITS,
  hardenedHostConfig,
  serverContainerSpec,
  serverEnvironment,
} from './container-spec.js';
export {
  createDockerClient,
  defaultSocketCandidates,
  type EngineEndpoint,
  type EngineInfo,
  probeEngine,
  resolveEngineEndpoint,
} from './engine.js';
export { checkImage, imageIdentity } from './image-check.js';
export { containerName, LABEL, networkName, sidecarName } from './labels.js';
export { MountError, resolveMounts, type WorkspaceRoot } from './mounts.js';
export { ownerIsAlive, processStartTime } from './process-identity.js';
export { type ContainerRuntime, createContainerRuntime } from './runtime.js';
export { StderrTail } from './stderr-tail.js';
export { type SweepReport, sweepDeadGateways } from './sweep.js';
