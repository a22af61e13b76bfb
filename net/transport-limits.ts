/**
 * The limits every HTTP/2 session and body copy of this process takes, set once from the config's `transport`
 * section by the command that starts the process (cli/cli-context.ts; defaults and their sources in
 * core/config/transport-schema.ts). They are process-wide by nature: the body budget is shared by every copy, and
 * each hop a call passes must accept what the next one does.
 */
import { TRANSPORT_DEFAULTS, type TransportConfig } from '../core/index.js';
import { BODY_BUDGET } from './body-copy.js';

export type TransportLimits = TransportConfig;

let current: TransportLimits = TRANSPORT_DEFAULTS;

/** The limits sessions and copies made from now on take (sessions already open keep theirs). */
export function configureTransport(limits: TransportLimits): void {
  current = limits;
  BODY_BUDGET.resize(limits.bodyBudgetBytes);
}

export function transportLimits(): TransportLimits {
  return current;
}
