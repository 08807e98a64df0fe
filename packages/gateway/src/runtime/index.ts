export { attachStdio } from './attach.js';
export { DockerContainedServer, type StartHooks, stderrLogPath } from './contained-server.js';
export {
  DEFAULT_LIMITS,
  hardenedHostConfig,
  PROXY_ALIAS,
  type ResolvedMount,
  SERVER_DNS,
  serverContainerSpec,
  serverEnvironment,
} from './container-spec.js';
export {
  createDockerClient,
  defaultSocketCandidates,
  describeEngine,
  ENGINE_FIX_HINT,
  type EngineEndpoint,
  type EngineInfo,
  engineRefusal,
  probeEngine,
  resolveEngineEndpoint,
} from './engine.js';
export { listContainers, removeContainer } from './engine-races.js';
export { checkImage, imageIdentity } from './image-check.js';
export {
  containerName,
  currentOwner,
  LABEL,
  networkName,
  type Owner,
  ownedBy,
  sidecarName,
} from './labels.js';
export { MountError, resolveMounts, verifyMounts, type WorkspaceRoot } from './mounts.js';
export { createServerNetworks, removeNetworks } from './networks.js';
export { ownerIsAlive, processStartTime } from './process-identity.js';
export {
  type ContainerProcessLimits,
  containerProcessLimits,
  describeProcessLimits,
  type HostHardLimits,
  hostHardLimitsFor,
  PROCESS_LIMIT_DEFAULTS,
  parseHardLimits,
  readHostHardLimits,
  ulimits,
} from './process-limits.js';
export { REAPER_MAIN, reaperLogPath } from './reaper.js';
export { type ContainerRuntime, createContainerRuntime, type SharedEngine } from './runtime.js';
export { type RunningSidecar, startSidecar } from './sidecar.js';
export { StderrTail } from './stderr-tail.js';
export { type SweepReport, sweepDeadGateways } from './sweep.js';
