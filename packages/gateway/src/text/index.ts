export { printable } from './printable.js';
