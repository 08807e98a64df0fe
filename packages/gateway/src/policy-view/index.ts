export { egressProblem, policyView } from './view.js';
