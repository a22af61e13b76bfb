/**
 * What is asked of the executor: a workload, at a lifecycle stage, for a
 * change. The same change, workload, stage and kind always name the same
 * experiment (the dedupe key), so a CI retry finds the experiment it already
 * submitted instead of running it twice.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InputError, MAX_TIMER_MS, NAME_PATTERN, hasControlCharacters, REVISION_MAX_LENGTH, REVISION_PATTERN, REVISION_RULE } from '../core/index.js';
import { newExperimentId } from './replay-experiment.js';

export const STAGES = ['diff', 'land', 'release', 'periodic'] as const;
export type Stage = (typeof STAGES)[number];

/** BullMQ priority (1 runs first): a diff blocks a person, a periodic A/A blocks nobody. */
export const STAGE_PRIORITY: Readonly<Record<Stage, number>> = { diff: 1, land: 2, release: 3, periodic: 4 };

const REVISION_MESSAGE = `must be ${REVISION_RULE}`;

const requestSchema = z.strictObject({
  workload: z.string().regex(NAME_PATTERN),
  stage: z.enum(STAGES).default('diff'),
  /** `experiment`: control against treatment, judged; `aa`: control against control, calibrates; `noop`: exercises the queue only. */
  kind: z.enum(['experiment', 'aa', 'noop']).default('experiment'),
  // Printed in summaries, CI comments and the dashboard: no control, line-separator or bidi characters.
  change: z
    .string()
    .min(1)
    .max(200)
    .refine((text) => !hasControlCharacters(text), { error: 'must be printable: no control, line-separator or bidi characters' })
    .optional(),
  control: z.string().url().optional(),
  treatment: z.string().url().optional(),
  // Checked here to fail at submission; deploy-command.ts checks again where revisions meet a command.
  controlRevision: z.string().min(1).max(REVISION_MAX_LENGTH).regex(REVISION_PATTERN, REVISION_MESSAGE).optional(),
  treatmentRevision: z.string().min(1).max(REVISION_MAX_LENGTH).regex(REVISION_PATTERN, REVISION_MESSAGE).optional(),
  seed: z.number().int().min(0).max(0xffffffff).optional(),
  /** Both arms run the control build; the treatment differs only by `treatmentHeaders` (lattice state validation). */
  sameBuild: z.boolean().optional(),
  treatmentHeaders: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/), z.string().max(1_000)).optional(),
  /** What an undecided experiment becomes at this stage; default: the workload's `harness.onInconclusive`. */
  onInconclusive: z.enum(['pass', 'fail', 'inconclusive']).optional(),
  overrides: z
    .strictObject({
      /** A fixed horizon: exactly this many trials, one look. */
      trials: z.number().int().min(1).max(1000).optional(),
      minTrials: z.number().int().min(2).max(1000).optional(),
      maxTrials: z.number().int().min(2).max(1000).optional(),
      budgetMs: z.number().gt(0).max(MAX_TIMER_MS).optional(),
      rate: z.number().gt(0).optional(),
      warmupMs: z.number().min(0).max(MAX_TIMER_MS).optional(),
      measureMs: z.number().gt(0).max(MAX_TIMER_MS).optional(),
    })
    .optional(),
});

export type ExperimentRequest = z.output<typeof requestSchema>;
export type ExperimentRequestInput = z.input<typeof requestSchema>;

/** Validate a request (from the CLI or from a queue's job data). */
export function parseRequest(data: unknown): ExperimentRequest {
  const parsed = requestSchema.safeParse(data);
  if (!parsed.success)
    throw new InputError(`invalid experiment request: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** The dedupe key of a request for a change; undefined without a change (every such submission is new). */
export function dedupeKey(request: ExperimentRequest): string | undefined {
  return request.change === undefined ? undefined : [request.workload, request.stage, request.kind, request.change].join('\u0000');
}

/** The experiment id: derived from the dedupe key when there is one, so the same submission gets the same id. */
export function experimentIdFor(request: ExperimentRequest, nowMs: number): string {
  const key = dedupeKey(request);
  if (key === undefined) return newExperimentId(request.kind === 'aa' ? 'aa' : 'exp', nowMs);
  return `exp-${createHash('sha256').update(key).digest('hex').slice(0, 20)}`;
}
