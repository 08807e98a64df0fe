export { AGENT_NAME, AGENT_SCOPE, AgentError, type AgentRecord, AgentStore } from './agents/store.js';
export * from './audit/index.js';
export { descriptionPrefix, EXPOSED_TOOL_NAME, exposedToolName, presentTool } from './catalog/present.js';
export {
  ConfigError,
  type ConfigErrorCode,
  type ContainerServerConfig,
  type EgressRule,
  type HttpServerConfig,
  type Limits,
  type MountRule,
  parseServersFile,
  RESERVED_SERVER_NAMES,
  SERVER_NAME,
  type ServerConfig,
  ServerStore,
  type ServersFile,
  validateRemoteUrl,
  validateServerName,
} from './config/servers.js';
export {
  type CheckStatus,
  checkHome,
  checkNode,
  checkPolicyInstalled,
  type DoctorCheck,
  type DoctorEnvironment,
  type DoctorReport,
  describePolicy,
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
  buildNpmServerImage,
  findInstalledPackage,
  type InstalledPackage,
  NPM_SERVER_LABEL,
  type NpmSpec,
  npmImageRepository,
  parseNpmSpec,
  planNpmServerContext,
} from './images/npm-server.js';
export {
  buildSidecarImage,
  findSidecarImage,
  planSidecarContext,
  SIDECAR_IMAGE_LABEL,
  SIDECAR_REPOSITORY,
} from './images/sidecar.js';
export { type FingerprintResult, fingerprintTool, type PinnableTool } from './pins/fingerprint.js';
export {
  approvePending,
  type DefinitionDiff,
  diffPending,
  PinError,
  type PinErrorCode,
  type Reconciliation,
  reconcileAndRecord,
  reconcilePins,
  resetPins,
  type WithheldTool,
} from './pins/reconcile.js';
export {
  approveReviewed,
  assertLocalPinsCount,
  formatApprovalReview,
  formatDiff,
  formatPendingReview,
  formatShownPins,
  type PendingReview,
  reviewApproval,
  reviewPending,
  type ShownPins,
  showPins,
} from './pins/review.js';
export {
  emptyServerPins,
  type PendingRecord,
  type PinRecord,
  PinStore,
  type PinsFile,
  parsePinsFile,
  type ServerPins,
} from './pins/store.js';
export { egressProblem, policyView } from './policy-view/view.js';
export * from './ports/index.js';
export * from './registration/index.js';
export { DockerContainedServer, stderrLogPath } from './runtime/contained-server.js';
export {
  DEFAULT_LIMITS,
  hardenedHostConfig,
  serverContainerSpec,
  serverEnvironment,
} from './runtime/container-spec.js';
export {
  createDockerClient,
  defaultSocketCandidates,
  type EngineEndpoint,
  type EngineInfo,
  probeEngine,
  resolveEngineEndpoint,
} from './runtime/engine.js';
export { checkImage, imageIdentity } from './runtime/image-check.js';
export { containerName, LABEL, networkName, sidecarName } from './runtime/labels.js';
export { MountError, resolveMounts, type WorkspaceRoot } from './runtime/mounts.js';
export { ownerIsAlive, processStartTime } from './runtime/process-identity.js';
export { type ContainerRuntime, createContainerRuntime } from './runtime/runtime.js';
export { StderrTail } from './runtime/stderr-tail.js';
export { type SweepReport, sweepDeadGateways } from './runtime/sweep.js';
export * from './schema/index.js';
export {
  buildServerCatalog,
  type CatalogEntry,
  type ServerCatalog,
  type WithheldEntry,
  withheldLine,
} from './serve/catalog.js';
export { createEndpointServer } from './serve/endpoint.js';
export { Gateway, type GatewayOptions, type ServerState } from './serve/gateway.js';
export {
  generateToken,
  type Identity,
  isLoopbackAddress,
  ListenError,
  parseListenAddress,
  serveHttp,
  type TokenResolver,
  tokensEqual,
} from './serve/http.js';
export * from './serve/pipeline/index.js';
export { newSessionId, type RunningGateway, runGateway, type ServeOptions } from './serve/run.js';
export { SERVER_INFO } from './serve/server-info.js';
export {
  expectObject,
  expectOnlyKeys,
  JsonStore,
  StoreError,
  type StoreErrorCode,
} from './store/json-store.js';
export { printable } from './text/printable.js';
export { ContainerUpstream } from './upstream/container.js';
export { upstreamFactory } from './upstream/factory.js';
export { UpstreamClient } from './upstream/mcp-client.js';
export { noRedirectFetch, RemoteUpstream } from './upstream/remote.js';
export { StreamTransport } from './upstream/stream-transport.js';
