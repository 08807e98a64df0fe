export {
  type BuildRequest,
  type BuiltImage,
  buildContextImage,
  CONTENT_LABEL,
  contentTag,
  repoTags,
} from './build.js';
export { type ContextFile, contextDigest, type ImageContext, packContext } from './context.js';
export {
  buildNodeBaseImage,
  discoverNodeBaseInputs,
  NODE_BASE_REPOSITORY,
  type NodeBaseInputs,
  parseLddOutput,
  planNodeBaseContext,
} from './node-base.js';
export {
  EXACT_VERSION,
  type FetchedPackage,
  fetchNpmPackage,
  type NpmRequest,
  parseNpmRequest,
} from './npm-fetch.js';
export {
  buildNpmServerImage,
  findInstalledPackage,
  type InstalledPackage,
  NPM_SERVER_LABEL,
  type NpmSpec,
  npmImageRepository,
  parseNpmSpec,
  planNpmServerContext,
} from './npm-server.js';
export {
  buildSidecarImage,
  findSidecarImage,
  planSidecarContext,
  SIDECAR_IMAGE_LABEL,
  SIDECAR_REPOSITORY,
} from './sidecar.js';
