/** Judging experiments: statistics, response and ranking comparison, checks, reports. */
export { ndcgAtK } from './ranking-metrics.js';
