export { describePolicy } from './describe.js';
export { egressProblem, policyView } from './view.js';
