/**
 * Programmable checks (FIRE Figure 4b). A *during* check is evaluated every
 * interval while the experiment runs, through the same monitor loop as the
 * dependency detectors (warm-up, interval, consecutive violations, maximum
 * duration): a sustained violation cancels the experiment. A *final* check
 * runs once at the end over everything the harness concluded; a failing
 * final check fails the verdict. Checks are plain TypeScript exported from
 * the module named by `harness.checksModule`:
 *
 *   import { defineChecks } from 'tandem/harness';
 *   export default defineChecks({
 *     during: [{ name: 'treatment-5xx', intervalMs: 5_000, consecutive: 3,
 *                evaluate: ({ live }) => ({ ok: live.errorShare('treatment', '5xx') < 0.01 }) }],
 *     final: [{ name: 'p99-under-200ms', evaluate: ({ verdict }) => ... }],
 *   });
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { ConfigError, type Clock, type RequestOutcome } from '../../core/index.js';
import type { Detector, CheckResult } from '../../guardrails/index.js';
import type { ExperimentVerdict } from '../judge/verdict.js';
import type { ResponseComparison } from '../compare/compare-responses.js';
import type { ResponseProperty } from '../compare/fuzz.js';

/** The most recent outcomes per arm, fed as the replay produces them. */
export class LiveOutcomes {
  readonly #byArm = new Map<string, RequestOutcome[]>();
  readonly #clock: Clock;
  readonly #keepMs: number;
  #lastTrimMs = Number.NEGATIVE_INFINITY;

  /** Keeps `keepMs` of outcomes (by intended send time). */
  constructor(clock: Clock, keepMs = 60_000) {
    this.#clock = clock;
    this.#keepMs = keepMs;
  }

  add(outcomes: readonly RequestOutcome[]): void {
    for (const o of outcomes) {
      const list = this.#byArm.get(o.arm) ?? [];
      list.push(o);
      this.#byArm.set(o.arm, list);
    }
    // Called for every outcome on the replay's hot path: trim in bulk, at most once a second.
    const now = this.#clock.now();
    if (now - this.#lastTrimMs < 1_000) return;
    this.#lastTrimMs = now;
    const oldest = now - this.#keepMs;
    for (const [arm, list] of this.#byArm) {
      const firstKept = list.findIndex((o) => o.intendedMs >= oldest);
      if (firstKept > 0) this.#byArm.set(arm, list.slice(firstKept));
      else if (firstKept === -1) this.#byArm.set(arm, []);
    }
  }

  /** Outcomes of `arm` sent in the last `windowMs`. */
  recent(arm: string, windowMs = this.#keepMs): readonly RequestOutcome[] {
    const since = this.#clock.now() - windowMs;
    return (this.#byArm.get(arm) ?? []).filter((o) => o.intendedMs >= since);
  }

  /** Share of recent outcomes of `arm` that failed (of one error class, or any). NaN without outcomes. */
  errorShare(arm: string, errorClass?: string, windowMs?: number): number {
    const list = this.recent(arm, windowMs);
    if (list.length === 0) return Number.NaN;
    return list.filter((o) => (errorClass === undefined ? o.errorClass !== '' : o.errorClass === errorClass)).length / list.length;
  }

  /** The q-quantile of recent latencies of `arm`, ms. NaN without outcomes. */
  latency(arm: string, q: number, windowMs?: number): number {
    const sorted = this.recent(arm, windowMs)
      .map((o) => o.latencyMs)
      .sort((a, b) => a - b);
    return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  }
}

export interface CheckOutcome {
  readonly ok: boolean;
  /** The quantity checked, for the report's chart. */
  readonly value?: number;
  readonly message?: string;
}

export interface DuringCheckContext {
  readonly experimentId: string;
  readonly elapsedMs: number;
  readonly live: LiveOutcomes;
}

export interface DuringCheck {
  readonly name: string;
  /** @default 0 */
  readonly warmupMs?: number;
  /** @default 10000 */
  readonly intervalMs?: number;
  /** Violations in a row that cancel the experiment. @default 3 */
  readonly consecutive?: number;
  /** @default 1 hour */
  readonly maxDurationMs?: number;
  evaluate(context: DuringCheckContext): CheckOutcome | Promise<CheckOutcome>;
}

export interface FinalCheckContext {
  readonly experimentId: string;
  readonly verdict: ExperimentVerdict;
  readonly comparison?: ResponseComparison;
}

export interface FinalCheck {
  readonly name: string;
  evaluate(context: FinalCheckContext): CheckOutcome | Promise<CheckOutcome>;
}

export interface CheckSet {
  readonly during?: readonly DuringCheck[];
  readonly final?: readonly FinalCheck[];
  /** Properties every response must have in single-SUT mode (`tandem fuzz`). */
  readonly properties?: readonly ResponseProperty[];
}

export interface FinalCheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly value?: number;
  readonly message: string;
}

/** Identity function that gives a checks module its types. */
export function defineChecks(checks: CheckSet): CheckSet {
  return checks;
}

/** A during check as a monitor detector, so it gets Figure 3's loop semantics unchanged. */
export function duringCheckDetector(check: DuringCheck, context: { experimentId: string; live: LiveOutcomes; clock: Clock }): Detector {
  let startMs = 0;
  return {
    name: `check:${check.name}`,
    warmupMs: check.warmupMs ?? 0,
    intervalMs: check.intervalMs ?? 10_000,
    consecutive: check.consecutive ?? 3,
    maxDurationMs: check.maxDurationMs ?? 3_600_000,
    maxErrors: 3,
    // A check that cannot be evaluated says nothing about the SUT; it is recorded, not fatal.
    onUnavailable: 'ignore',
    prime: async () => {
      startMs = context.clock.now();
    },
    check: async (): Promise<CheckResult> => {
      const outcome = await check.evaluate({ experimentId: context.experimentId, elapsedMs: context.clock.now() - startMs, live: context.live });
      const value = outcome.value ?? (outcome.ok ? 0 : 1);
      return { verdict: outcome.ok ? 'clear' : 'violation', value, baseline: null, ...(outcome.message ? { message: outcome.message } : {}) };
    },
  };
}

/** Run every final check; a check that throws fails with its error as the message. */
export async function runFinalChecks(checks: readonly FinalCheck[], context: FinalCheckContext): Promise<FinalCheckResult[]> {
  const results: FinalCheckResult[] = [];
  for (const check of checks) {
    try {
      const outcome = await check.evaluate(context);
      results.push({
        name: check.name,
        ok: outcome.ok,
        ...(outcome.value !== undefined ? { value: outcome.value } : {}),
        message: outcome.message ?? (outcome.ok ? 'passed' : 'failed'),
      });
    } catch (error) {
      results.push({ name: check.name, ok: false, message: `threw: ${(error as Error).message}` });
    }
  }
  return results;
}

/** Built-in final checks from the workload's response settings. */
export function configuredFinalChecks(
  responses: { ranking?: { minNdcg?: number | undefined; k: number } | undefined; maxStatusMismatchShare?: number | undefined } | undefined,
): FinalCheck[] {
  const checks: FinalCheck[] = [];
  const minNdcg = responses?.ranking?.minNdcg;
  if (minNdcg !== undefined) {
    checks.push({
      name: `ndcg@${responses!.ranking!.k}>=${minNdcg}`,
      evaluate: ({ comparison }) => {
        const mean = comparison?.ranking?.ndcg.mean;
        if (mean === undefined || Number.isNaN(mean)) return { ok: false, message: 'no ranked lists were compared' };
        return {
          ok: mean >= minNdcg,
          value: mean,
          message: `mean NDCG@${responses!.ranking!.k} ${mean.toFixed(4)} ${mean >= minNdcg ? '>=' : '<'} ${minNdcg}`,
        };
      },
    });
  }
  const maxMismatch = responses?.maxStatusMismatchShare;
  if (maxMismatch !== undefined) {
    checks.push({
      name: `status-mismatch<=${maxMismatch}`,
      evaluate: ({ comparison }) => {
        if (!comparison || comparison.pairs === 0) return { ok: false, message: 'no responses were compared' };
        const share = comparison.statusMismatchShare;
        return {
          ok: share <= maxMismatch,
          value: share,
          message: `${comparison.statusMismatches} of ${comparison.pairs} records answered with different statuses (${(share * 100).toFixed(2)}%)`,
        };
      },
    });
  }
  return checks;
}

/** Load a checks module (TypeScript or JavaScript) exporting a CheckSet as default or as `checks`. */
export async function loadChecksModule(path: string, cwd: string): Promise<CheckSet> {
  const file = resolve(cwd, path);
  let loaded: { default?: unknown; checks?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown; checks?: unknown };
  } catch (error) {
    throw new ConfigError([`harness.checksModule: cannot load ${file}: ${(error as Error).message}`]);
  }
  const set = (loaded.default ?? loaded.checks) as CheckSet | undefined;
  const valid = (list: unknown): boolean =>
    list === undefined ||
    (Array.isArray(list) &&
      list.every((c) => typeof (c as { name?: unknown }).name === 'string' && typeof (c as { evaluate?: unknown }).evaluate === 'function'));
  const validProperties =
    set?.properties === undefined ||
    (Array.isArray(set.properties) && set.properties.every((p) => typeof p?.name === 'string' && typeof p?.check === 'function'));
  if (!set || typeof set !== 'object' || !valid(set.during) || !valid(set.final) || !validProperties) {
    throw new ConfigError([
      `harness.checksModule: ${file} must export default defineChecks({ during?: [...], final?: [...], properties?: [...] }) with a name and an evaluate (or check) function per entry`,
    ]);
  }
  return set;
}
