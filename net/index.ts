/** The transport layer every protocol shares: what the recorder, the replayer and the router must do alike. */
export { withHeaderLimits, H2_MAX_HEADER_LIST_BYTES, H2_MAX_HEADER_PAIRS } from './h2-limits.js';
export { ResetBudget, DEFAULT_RESET_BUDGET, type ResetBudgetOptions } from './reset-budget.js';
export { BodyCopy, BodyBudget, BODY_BUDGET } from './body-copy.js';
