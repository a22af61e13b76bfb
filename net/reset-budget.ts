/**
 * How many streams one client connection may reset before they were answered, while their upstream streams were
 * open: a token bucket (`burst` at once, refilled at `perSecond`). HTTP/2 rapid reset (CVE-2023-44487) opens and
 * cancels streams as fast as it can so the server behind a proxy does work nobody waits for; a connection past its
 * budget is told GOAWAY(ENHANCE_YOUR_CALM) and closed. Clients cancelling calls at human or deadline rates never
 * reach it. nghttp2's own limit works alike (nghttp2_option_set_stream_reset_rate_limit, 1000 and 33/s), but only
 * counts resets that reach it before the stream was passed on. The sidecar's default (net/transport-limits.ts) is a tenth of
 * nghttp2's burst and a third of its rate.
 */
export interface ResetBudgetOptions {
  readonly burst: number;
  readonly perSecond: number;
}

export class ResetBudget {
  #tokens: number;
  #atMs: number;

  constructor(
    readonly options: ResetBudgetOptions,
    nowMs: number,
  ) {
    this.#tokens = options.burst;
    this.#atMs = nowMs;
  }

  /** Spend one early reset at `nowMs`; false once the connection is over its budget. */
  spend(nowMs: number): boolean {
    const elapsed = Math.max(0, nowMs - this.#atMs);
    this.#tokens = Math.min(this.options.burst, this.#tokens + (elapsed / 1000) * this.options.perSecond);
    this.#atMs = nowMs;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
