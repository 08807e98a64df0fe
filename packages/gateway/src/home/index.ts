export { type HomeInspection, type HomeProblem, inspectHome, resolveHome } from './home.js';
