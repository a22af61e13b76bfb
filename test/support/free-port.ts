export { freePort } from '../../core/index.js';
