export { RingfenceError, isRingfenceError } from './errors.js';
