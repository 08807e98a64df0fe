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
} from './doctor.js';
