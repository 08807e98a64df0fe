export { isRingfenceError, RingfenceError } from './errors.js';
