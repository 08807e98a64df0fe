export {
  type CheckStatus,
  checkEngineDns,
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
} from './doctor.js';
export { CVE_2024_29018_FIXED, type InternalDnsVerdict, internalDnsVerdict } from './engine-dns.js';
export {
  boundingSetAllowsRaise,
  checkEngineLimits,
  type EngineDefaultLimits,
  engineDefaultsVerdict,
  type HostLimitFacts,
  probeEngineDefaultLimits,
  readHostLimitFacts,
  recordedLimits,
} from './engine-limits.js';
export { checkEras, eraLine, legacyClientsNote } from './eras.js';
export { checkOAuthLogins, oauthLoginLine } from './oauth-logins.js';
