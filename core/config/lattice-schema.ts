/**
 * Degradation lattices (HiLO): product states L0…Ln in order of severity,
 * each fixing every participating service's level and entered when the
 * product load-factor crosses its threshold. Validated with paths: levels
 * within each service's range, every state assigning every service, levels
 * never decreasing from one state to the next (the order is a lattice),
 * thresholds increasing, names unique.
 */
import { z } from 'zod';
import { positiveTimerDurationSchema } from './duration-schema.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const name = z.string().regex(NAME, { error: 'must be a name of letters, digits, ".", "_" or "-"' });
const duration = positiveTimerDurationSchema;

const state = z.strictObject({
  name,
  threshold: z.number().min(0).describe('Product load-factor at or above which this state is entered (the first state: 0).'),
  recoverBelow: z
    .number()
    .min(0)
    .optional()
    .describe('Load-factor under which the controller may step down from this state; default 90% of the threshold (hysteresis).'),
  levels: z.record(z.string(), z.number().int().min(0)).describe('Service → degradation level in this state.'),
});

export const latticeSchema = z
  .strictObject({
    name,
    scenarios: z.array(name).min(1).default(['default']).describe('Routes with their own active state (HiLO §3.4).'),
    services: z
      .record(
        z.string(),
        z.strictObject({
          maxLevel: z
            .number()
            .int()
            .min(0)
            .max(100)
            .describe(
              'Highest level the service implements (levels 0..maxLevel); 0 for a service that only reports its load-factor and is relieved by its callers degrading.',
            ),
        }),
      )
      .describe('Participating services.'),
    aggregate: z
      .union([z.literal('max'), z.strictObject({ quantile: z.number().gt(0).lte(1) }), z.strictObject({ weighted: z.record(z.string(), z.number().gt(0)) })])
      .default('max')
      .describe('How service load-factors make the product load-factor: the max, a quantile, or a weighted mean.'),
    window: duration.prefault('1m').describe("Load-factor reports older than this are dropped from each service's reservoir."),
    reservoirSize: z.number().int().min(1).max(100_000).default(256).describe('Reports kept per service (reservoir sampling damps spikes).'),
    decisionPeriod: duration.prefault('2m').describe('Time between controller decisions (HiLO: 2 minutes).'),
    recoveryDamping: z.number().int().min(1).max(1000).default(3).describe('Decision periods in a row below recoverBelow before stepping down one state.'),
    priorities: z
      .array(
        z.strictObject({
          name,
          offset: z.number().int().min(0).max(10).describe('States further along than the active one this traffic gets, once degradation starts.'),
        }),
      )
      .default([])
      .describe('Request priorities (HiLO §3.4): lower priority traffic degrades earlier.'),
    states: z.array(state).min(2).describe('Product states in order of severity: L0 (no degradation) first.'),
    qualityTarget: z
      .strictObject({
        maxNdcgLoss: z.number().min(0).max(1).default(0.05).describe('Most NDCG@k any state may lose against L0 (HiLO: 0.5 OneDCG points).'),
        maxNoResultShare: z.number().min(0).max(1).default(0.01).describe('Most share of empty results any state may add.'),
      })
      .prefault({})
      .describe('What state validation and capacity tests hold every state to.'),
  })
  .superRefine((lattice, ctx) => {
    const services = Object.keys(lattice.services);
    const seen = new Set<string>();
    lattice.states.forEach((s, i) => {
      if (seen.has(s.name)) ctx.addIssue({ code: 'custom', path: ['states', i, 'name'], input: s.name, message: `state name "${s.name}" is used twice` });
      seen.add(s.name);
      for (const service of services)
        if (s.levels[service] === undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['states', i, 'levels'],
            input: s.levels,
            message: `must assign a level to every service: ${service} is missing`,
          });
      for (const [service, level] of Object.entries(s.levels)) {
        const spec = lattice.services[service];
        if (!spec)
          ctx.addIssue({ code: 'custom', path: ['states', i, 'levels', service], input: level, message: `service "${service}" is not declared in services` });
        else if (level > spec.maxLevel)
          ctx.addIssue({
            code: 'custom',
            path: ['states', i, 'levels', service],
            input: level,
            message: `must be <= ${service}'s maxLevel (${spec.maxLevel})`,
          });
        const previous = lattice.states[i - 1]?.levels[service];
        if (previous !== undefined && level < previous)
          ctx.addIssue({
            code: 'custom',
            path: ['states', i, 'levels', service],
            input: level,
            message: `must not be below ${service}'s level in ${lattice.states[i - 1]!.name} (${previous}): levels never decrease along the lattice`,
          });
      }
      if (i === 0 && s.threshold !== 0)
        ctx.addIssue({
          code: 'custom',
          path: ['states', 0, 'threshold'],
          input: s.threshold,
          message: 'the first state (no degradation) must have threshold 0',
        });
      if (i > 0 && s.threshold <= lattice.states[i - 1]!.threshold)
        ctx.addIssue({
          code: 'custom',
          path: ['states', i, 'threshold'],
          input: s.threshold,
          message: `must be above the previous state's threshold (${lattice.states[i - 1]!.threshold})`,
        });
      if (s.recoverBelow !== undefined && s.recoverBelow > s.threshold)
        ctx.addIssue({
          code: 'custom',
          path: ['states', i, 'recoverBelow'],
          input: s.recoverBelow,
          message: `must be <= the state's threshold (${s.threshold})`,
        });
    });
    const priorities = new Set<string>();
    lattice.priorities.forEach((p, i) => {
      if (priorities.has(p.name))
        ctx.addIssue({ code: 'custom', path: ['priorities', i, 'name'], input: p.name, message: `priority "${p.name}" is used twice` });
      priorities.add(p.name);
    });
  });

export type LatticeConfig = z.output<typeof latticeSchema>;
