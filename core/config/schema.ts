/**
 * The configuration schema: one source for validation, defaults, the typed
 * config and `tandem schema` (JSON Schema for editors). Durations are human
 * strings in the file and milliseconds after parsing.
 */
import { z } from 'zod';
import { positiveDurationSchema, positiveTimerDurationSchema, timerDurationSchema } from './duration-schema.js';
import { DEFAULT_SECRET_NAMES } from '../secret-names.js';
import { latticeSchema } from './lattice-schema.js';
import { transportSchema } from './transport-schema.js';

/** A value used in file names and table keys: letters, digits, `.`, `_`, `-`. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const name = z.string().regex(NAME_PATTERN, { error: 'must be a name of letters, digits, ".", "_" or "-" (at most 128, not starting with "." or "-")' });

/** A CPU list as `taskset -c` takes it. */
const cpuList = z.string().regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, { error: 'must be a CPU list like "0" or "0-1,4"' });

/** A human duration string parsed to milliseconds; something waits for it, so a timer must hold it. */
const duration = timerDurationSchema;
const positiveDuration = positiveTimerDurationSchema;
/** A window of time compared with timestamps, never waited for: up to the ten years any duration may be. */
const positiveWindow = positiveDurationSchema;

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

/** Where the router sends a dependency's calls: an origin, since each call keeps its own path (a path here crashed the router's HTTP/1 side). */
const dependencyTarget = httpUrl.refine(
  (url) => {
    // Not a URL at all is the check above's to say.
    if (!URL.canParse(url)) return true;
    const parsed = new URL(url);
    return parsed.pathname === '/' && parsed.search === '' && parsed.hash === '' && parsed.username === '' && parsed.password === '';
  },
  { error: 'must be an origin (scheme, host and port) with no path, query or credentials: each call keeps its own path' },
);

/** A rate in (0, 1]: a share of requests, not a per-second rate. */
const share = z.number().gt(0).lte(1);

const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: 'must be an HTTP header name' });

const localStore = z.strictObject({
  kind: z.literal('local'),
  dir: z.string().min(1).default('.tandem').describe('Directory of the store files, relative to the working directory.'),
});

const clickhouseStore = z.strictObject({
  kind: z.literal('clickhouse'),
  url: httpUrl.default('http://127.0.0.1:8123').describe('HTTP interface of the ClickHouse server.'),
  database: name.default('tandem').describe("Database holding Tandem's tables; created by `tandem store init`."),
  username: z.string().default('default'),
  passwordEnv: z.string().optional().describe('Name of the environment variable that holds the password (passwords never sit in config files).'),
  requestTimeout: positiveDuration.prefault('30s').describe('Timeout of one request to ClickHouse.'),
  batchRows: z.number().int().min(1).max(1_000_000).default(10_000).describe('Rows per insert request (batched on the client: 18.16 has no async inserts).'),
});

const inlineQueue = z.strictObject({
  kind: z.literal('inline'),
  concurrency: z.number().int().min(1).max(64).default(1).describe('Experiments run at once in this process.'),
});

const bullmqQueue = z.strictObject({
  kind: z.literal('bullmq'),
  redisUrl: z
    .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })
    .default('redis://127.0.0.1:6379')
    .describe('Redis shared by submitters and workers.'),
  prefix: name.default('tandem').describe('Key prefix of the BullMQ queues.'),
  concurrency: z.number().int().min(1).max(64).default(1).describe('Experiments one worker process runs at once.'),
  globalConcurrency: z.number().int().min(1).optional().describe('Experiments running at once across every worker.'),
  lockDuration: positiveDuration
    .prefault('30s')
    .describe('How long a worker holds an experiment without renewing its lock; a worker killed mid-experiment is detected after about this long.'),
  stalledInterval: positiveDuration.prefault('30s').describe('How often workers look for experiments whose worker died, to resume them.'),
});

const redactionRules = {
  headers: z
    .array(headerName)
    .default([])
    .describe('Header names redacted in addition to authorization, cookie, set-cookie, proxy-authorization and headers named like a secret (x-api-key).'),
  bodyFields: z.array(z.string().min(1)).default([]).describe('Dotted paths into JSON bodies from the root, e.g. "user.email" (arrays are transparent).'),
};

/** Descriptors of a service's gRPC methods: the recorder's protobuf redaction and the harness's comparison read them. */
const grpcDescriptors = z.strictObject({
  descriptorSet: z
    .string()
    .min(1)
    .optional()
    .describe('A FileDescriptorSet (protoc --descriptor_set_out --include_imports, buf build -o), relative to the working directory.'),
  protoFiles: z.array(z.string().min(1)).min(1).optional().describe('.proto files, relative to the working directory; imports are looked up beside them.'),
});

const recorder = z.strictObject({
  rate: share.default(1e-4).describe('Share of requests sampled, in (0, 1] (FIRE samples 1e-5 to 6.74e-5); not a per-second rate.'),
  stickyKey: z
    .strictObject({ header: headerName.optional(), query: z.string().min(1).optional() })
    .refine((key) => (key.header === undefined) !== (key.query === undefined), {
      error: 'must name exactly one of "header" or "query"',
    })
    .optional()
    .describe('Keep or drop whole sessions together by hashing this header or query parameter.'),
  redact: z
    .strictObject({
      ...redactionRules,
      names: z
        .array(z.string().min(1).max(200))
        .default([...DEFAULT_SECRET_NAMES])
        .describe(
          `Names redacted wherever they appear: headers, query parameters, form and multipart fields, JSON fields at any depth (case-insensitive, "-" = "_"). Replaces the default list: ${DEFAULT_SECRET_NAMES.join(', ')}.`,
        ),
      tiers: z
        .record(name, z.strictObject({ ...redactionRules, names: z.array(z.string().min(1).max(200)).default([]).describe('Names added for this tier.') }))
        .default({})
        .describe('Per-tier additions to the rules above (never removals).'),
    })
    .prefault({}),
  maxBodyBytes: z.number().int().min(0).default(1_048_576).describe('Bodies larger than this are stored truncated and skipped by replay.'),
  bufferRecords: z.number().int().min(1).default(10_000).describe('Records waiting to be written; beyond this the recorder drops and counts.'),
  grpc: z
    .strictObject({
      withoutResponses: z
        .array(z.string().regex(/^[A-Za-z_][\w.]*\/([A-Za-z_]\w*|\*)$/, 'must be "package.Service/Method" or "package.Service/*"'))
        .default([])
        .describe(
          'gRPC methods whose response messages are not kept ("package.Service/Method", or "package.Service/*" for every method of a service): their records hold status and trailers, no messages (responseTruncated).',
        ),
      descriptors: grpcDescriptors
        .optional()
        .describe(
          "The services' descriptors: protobuf request and response messages of the methods they declare are redacted by field name like JSON (recorder.redact.names, at any depth, map entries by key). Without them only JSON messages are redacted; protobuf is stored as sent.",
        ),
    })
    .prefault({})
    .describe('What the recorder keeps of gRPC calls.'),
});

const arm = z
  .strictObject({
    url: httpUrl.optional().describe('A running deployment of this arm.'),
    deploy: z
      .strictObject({
        command: z.string().min(1).describe('Shell command starting the arm; {port}, {revision}, {arm} and dependency URLs are substituted.'),
        cwd: z.string().optional(),
        env: z.record(z.string(), z.string()).default({}),
        readyPath: z.string().startsWith('/').default('/healthz').describe('Path probed until the arm answers 2xx (readyProbe http).'),
        readyProbe: z
          .enum(['http', 'grpc-health'])
          .default('http')
          .describe(
            'How readiness is probed: an HTTP GET of readyPath, or grpc.health.v1.Health/Check over cleartext HTTP/2 answering SERVING (a gRPC-only service).',
          ),
        readyTimeout: positiveDuration.prefault('30s').describe('How long the arm may take to become ready.'),
      })
      .optional()
      .describe('Start the arm per trial with a command.'),
    reset: z
      .strictObject({
        command: z
          .string()
          .min(1)
          .describe(
            'Shell command run before every trial, after the arm is up: {port}, {arm} and {revision} are substituted (passed as environment variables, never parsed by the shell).',
          ),
        timeout: positiveDuration.prefault('60s').describe('A reset running longer is stopped and the trial replaced.'),
        cwd: z.string().optional(),
      })
      .optional()
      .describe(
        'Bring a stateful service back to the same state before each trial (reload fixtures, truncate tables), so replayed writes of one trial do not change the next.',
      ),
  })
  .refine((a) => (a.url === undefined) !== (a.deploy === undefined), { error: 'must have exactly one of "url" or "deploy"' });

const dependencyCommon = {
  name,
  env: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, { error: 'must be an environment variable name like PREDICTION_URL' })
    .optional()
    .describe("Environment variable through which the SUT receives this dependency's router URL."),
  writes: z
    .enum(['block', 'tag', 'allow'])
    .default('tag')
    .describe(
      'What the router does with writes: any method but GET, HEAD, OPTIONS and TRACE (RFC 9110 §9.2.1), a method override (X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override, _method) naming one, or a path under writePaths.',
    ),
  writePaths: z
    .array(z.string().startsWith('/'))
    .default([])
    .describe(
      'Paths treated as writes whatever their method; matched after normalization (decoded, dot-segments resolved, slashes collapsed, ;params dropped, case folded).',
    ),
  timeout: positiveDuration.prefault('10s').describe('Timeout of one forwarded call.'),
  grpc: z
    .strictObject({
      writeMethods: z
        .array(z.string().min(1))
        .default([])
        .describe('gRPC methods that are writes, as globs over "package.Service/Method" (e.g. "shop.Cart/*"); always writes.'),
      readMethods: z
        .array(z.string().min(1))
        .default([])
        .describe(
          'gRPC methods that have no side effects, as globs; a method neither here nor declared NO_SIDE_EFFECTS in descriptorSet is a write (every gRPC call is a POST).',
        ),
      descriptorSet: z
        .string()
        .min(1)
        .optional()
        .describe("A FileDescriptorSet of the dependency's services: a method whose idempotency_level is NO_SIDE_EFFECTS is a read, every other one a write."),
    })
    .optional()
    .describe('How the router tells gRPC reads from writes (docs/grpc.md). Without it every gRPC method is a write.'),
};

const dependency = z.discriminatedUnion('policy', [
  z.strictObject({ ...dependencyCommon, policy: z.literal('isolated'), target: dependencyTarget.describe('The isolated replica tier.') }),
  z
    .strictObject({
      ...dependencyCommon,
      policy: z.literal('pinned'),
      shards: z.array(dependencyTarget).min(1).describe('Every shard of the dependency.'),
      pin: z.number().int().min(1).optional().describe('How many shards the experiment may use, chosen deterministically from the experiment seed.'),
      pinned: z.array(dependencyTarget).min(1).optional().describe('Explicit shards to pin to, instead of pin.'),
    })
    .superRefine((dep, ctx) => {
      if ((dep.pin === undefined) === (dep.pinned === undefined)) {
        ctx.addIssue({ code: 'custom', message: 'must have exactly one of "pin" or "pinned"', input: dep });
      }
      if (dep.pin !== undefined && dep.pin > dep.shards.length) {
        ctx.addIssue({ code: 'custom', path: ['pin'], input: dep.pin, message: `must be <= the number of shards (${dep.shards.length})` });
      }
      for (const [i, url] of (dep.pinned ?? []).entries()) {
        if (!dep.shards.includes(url)) ctx.addIssue({ code: 'custom', path: ['pinned', i], input: url, message: 'must be one of "shards"' });
      }
    }),
  z.strictObject({ ...dependencyCommon, policy: z.literal('shared'), target: dependencyTarget.describe('The shared production dependency.') }),
]);

const detector = z
  .strictObject({
    name,
    kind: z.enum(['dependency-health', 'experiment-attributed', 'grpc-health']),
    protocol: z
      .enum(['http', 'grpc'])
      .default('http')
      .describe(
        'experiment-attributed: how the error records are read: GET of the source URL, or the gRPC method tandem.errors.v1.ErrorRecords/List at the source address (guardrails/detectors/error-records.proto).',
      ),
    source: httpUrl.describe(
      'Prometheus endpoint (dependency-health), error-record endpoint (experiment-attributed), or the address of a gRPC server (grpc-health: grpc.health.v1.Health/Check over cleartext HTTP/2).',
    ),
    rule: z
      .strictObject({
        metric: z.string().min(1).optional().describe('Prometheus metric name read from the source.'),
        service: z
          .string()
          .max(200)
          .optional()
          .describe('grpc-health: the service whose health is checked; the whole server when absent. Anything but SERVING is a violation.'),
        labels: z.record(z.string(), z.string()).default({}).describe('Label values a series must have to count.'),
        compare: z
          .enum(['increase', 'rate', 'value'])
          .default('increase')
          .describe('increase: value minus baseline; rate: increase per second; value: the value itself.'),
        above: z.number().default(0).describe('A check is a violation when the compared quantity is strictly above this.'),
      })
      .prefault({}),
    warmup: duration.prefault('0s').describe('Checks before this are skipped.'),
    interval: positiveDuration.prefault('10s').describe('Time between checks.'),
    consecutive: z.number().int().min(1).default(3).describe('Violations in a row that cancel the experiment; a clear check resets the count.'),
    maxDuration: positiveDuration.prefault('1h').describe('The detector retires after warmup + maxDuration.'),
    maxErrors: z.number().int().min(1).default(3).describe('Unreadable checks in a row before the experiment is cancelled as "monitoring unavailable".'),
    onUnavailable: z.enum(['cancel', 'ignore']).default('cancel').describe('What maxErrors unreadable checks do.'),
  })
  .check((ctx) => {
    if (ctx.value.kind === 'dependency-health' && ctx.value.rule.metric === undefined) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value.rule,
        path: ['rule', 'metric'],
        message: 'a dependency-health detector needs rule.metric (the Prometheus metric it watches)',
      });
    }
  });

const check = z.strictObject({
  metric: z.string().min(1).describe('Metric judged, e.g. latency_shift, latency_p99, error_share, cpu_per_request, or a scraped counter.'),
  direction: z.enum(['increase-is-bad', 'decrease-is-bad', 'either']).default('increase-is-bad'),
  threshold: z
    .number()
    .min(0)
    .max(10)
    .optional()
    .describe('Practical threshold as a relative change (0.02 = 2%); defaults to 2% for latency and CPU, 0.5 points for error shares.'),
  critical: z.boolean().default(false).describe('A regression of this metric fails the experiment on its own.'),
  mustHaveData: z.boolean().default(true).describe('Too few data points is a failure, never a pass.'),
});

const ranking = z.strictObject({
  path: z.string().min(1).describe('Dotted path to the ranked list in the JSON response, e.g. "items" or "result.hits".'),
  id: z.string().min(1).optional().describe('Field of each list entry that identifies it; entries are compared as values when absent.'),
  k: z.number().int().min(1).max(1000).default(10).describe('Depth of NDCG@k and overlap@k.'),
  labelsPath: z
    .string()
    .min(1)
    .optional()
    .describe('Dotted path in the recorded request body to graded labels ({id: grade}); NDCG is then against the labels instead of control.'),
  minNdcg: z.number().min(0).max(1).optional().describe('Final check: mean NDCG@k below this fails the experiment.'),
});

const harness = z.strictObject({
  passScore: z
    .unknown()
    .optional()
    .refine((v) => v === undefined, {
      error:
        'passScore was removed: the verdict no longer votes. An experiment passes only when every critical metric is decided not to regress and no judged metric regressed; mark metrics critical or not with `checks`, and choose harness.onInconclusive (docs/harness.md)',
    })
    .describe('Removed (the voting score); setting it is an error that says what replaced it.'),
  alpha: z.number().gt(0).lt(0.5).default(0.05).describe('False discovery rate across the metrics of one experiment (Benjamini–Hochberg).'),
  minPoints: z.number().int().min(1).default(50).describe('A metric with fewer data points (paired records or scraped samples) is "no data", never a pass.'),
  onInconclusive: z
    .enum(['pass', 'fail', 'inconclusive'])
    .default('inconclusive')
    .describe(
      'What an experiment becomes when a critical metric is still undecided at the last trial: inconclusive (exit 5, the default), passed (the report says so prominently) or failed (regressed).',
    ),
  checksModule: z
    .string()
    .min(1)
    .optional()
    .describe(
      'TypeScript or JavaScript module exporting programmable checks (defineChecks): during checks run with the monitors, final checks and fuzz properties at the end.',
    ),
  responses: z
    .strictObject({
      ignoreFields: z
        .array(z.string().min(1))
        .default([])
        .describe('JSON paths always ignored by the structural diff, e.g. "meta.requestId" or "items[].debug".'),
      noiseRatio: z
        .number()
        .min(1)
        .default(2)
        .describe('A field whose control-vs-treatment difference rate is at most this multiple of its control-vs-control′ rate is noise.'),
      ranking: ranking.optional().describe('Compare ranked lists: NDCG@k, Kendall tau and overlap@k.'),
      maxStatusMismatchShare: share.optional().describe('Final check: a larger share of records answered with different statuses fails the experiment.'),
      grpc: grpcDescriptors
        .optional()
        .describe(
          'How gRPC responses are decoded for comparison: each message is decoded with these descriptors and diffed field by field (docs/grpc.md). Without them gRPC responses are counted as not compared.',
        ),
    })
    .optional()
    .describe('Compare responses (requires replay.compareResponses).'),
});

/**
 * The sequential judge's default design: first look after 4 trials, at most 30 (docs/verdicts.md). The sign flips
 * cannot decide before about the 8th trial at α = 0.05 (2/2ⁿ against the look's level), and a typical service's
 * per-trial CPU effect has an sd of 1–2%: 12 trials left an unchanged build undecided on the user's own service.
 */
export const DEFAULT_MIN_TRIALS = 4;
export const DEFAULT_MAX_TRIALS = 30;

const workloadObject = z.strictObject({
  name,
  tier: name.optional().describe("Tier of the service under test; defaults to the workload's name (a workload used only by `tandem affected` needs none)."),
  arms: z
    .strictObject({
      control: arm,
      treatment: arm,
      controlPrime: z
        .strictObject({
          url: httpUrl.optional().describe('A second running deployment of the control build.'),
          deployed: z
            .literal(true)
            .optional()
            .describe('Deploy a second copy of the control arm per trial (its command and revision), with router listeners of its own.'),
        })
        .refine((p) => (p.url === undefined) !== (p.deployed === undefined), { error: 'must have exactly one of "url" or "deployed: true"' })
        .optional()
        .describe(
          "Optional second copy of control (Diffy's noise cancellation): response fields that differ between the two controls are ignored by the comparison.",
        ),
    })
    .refine((a) => a.controlPrime?.deployed !== true || a.control.deploy !== undefined, {
      error: 'controlPrime.deployed needs a control arm with a deploy command to copy',
      path: ['controlPrime', 'deployed'],
    })
    .optional()
    .describe('How to reach or start each arm; overridable on the command line.'),
  corpus: z
    .strictObject({
      tier: name.optional().describe("Recorded tier to replay; defaults to the workload's tier."),
      lookback: positiveWindow.prefault('4h').describe('Only records this recent are replayed (FIRE: 1-4 h).'),
      limit: z.number().int().min(1).optional().describe('At most this many records per trial.'),
    })
    .prefault({}),
  replay: z
    .strictObject({
      rate: z.number().gt(0).max(1_000_000).default(50).describe('Requests per second sent to each arm (open loop).'),
      concurrency: z.number().int().min(1).max(100_000).default(64).describe('In-flight cap per arm.'),
      timeout: positiveDuration.prefault('5s').describe('Timeout of one replayed request.'),
      minAchievedShare: share.default(0.9).describe('A trial whose achieved rate falls below this share of the target fails its load.'),
      identityHeaderPrefix: z
        .string()
        .regex(/^[a-z0-9-]+$/)
        .default('x-tandem-')
        .describe('Prefix of the experiment identity headers.'),
      compareResponses: z.boolean().default(false).describe('Keep response bodies for response comparison.'),
      http2: z
        .strictObject({
          connections: z.number().int().min(1).max(64).default(1).describe('HTTP/2 connections to each process of an arm, used in turn.'),
          maxConcurrentStreams: z
            .number()
            .int()
            .min(1)
            .max(10_000)
            .default(100)
            .describe('Streams opened at once on one connection (the server may allow fewer).'),
        })
        .prefault({})
        .describe('How gRPC records (and any record taken over HTTP/2) are replayed: over cleartext HTTP/2 with multiplexed streams (docs/grpc.md).'),
      wrap: z
        .boolean()
        .default(false)
        .describe(
          'When a trial reaches the end of the corpus window, start it again from the first record (a short corpus then holds the rate; records repeat). Off: the trial ends early and fails its load.',
        ),
      filter: z
        .strictObject({
          methods: z
            .array(z.string().regex(/^[A-Za-z]+$/, { error: 'must be an HTTP method' }))
            .min(1)
            .optional()
            .describe('Replay only these methods, e.g. [GET, HEAD] for a stateful service that must not see writes.'),
          paths: z.array(z.string().min(1)).min(1).optional().describe('Replay only paths (without the query) matching one of these globs, e.g. "/api/**".'),
          excludePaths: z.array(z.string().min(1)).optional().describe('Never replay paths matching these globs.'),
        })
        .optional()
        .describe('Which recorded requests are replayed.'),
      rewrite: z
        .strictObject({
          dropHeaders: z.array(headerName).optional().describe('Recorded headers not replayed, e.g. accept-encoding (bodies come back uncompressed).'),
          setHeaders: z.record(headerName, z.string()).optional().describe('Headers set on every replayed request.'),
        })
        .optional()
        .describe('How recorded requests are changed before they are replayed.'),
    })
    .prefault({}),
  trials: z
    .strictObject({
      // At most 200: each look takes an M-estimate over every trial so far, so the boundary's one-off simulation
      // grows with max² (about 25 s at 200 on two cores; harness/judge/huber-looks.ts). A fixed horizon has one look.
      min: z
        .number()
        .int()
        .min(2)
        .max(200)
        .optional()
        .describe('First look of the sequential judge: the verdict is looked at after every completed trial from this one on. @default 4'),
      max: z
        .number()
        .int()
        .min(2)
        .max(200)
        .optional()
        .describe(
          'Last trial: a critical metric still undecided then makes the experiment inconclusive (at most 200; a longer experiment is a fixed horizon, `count`). No look can decide before 6 trials at alpha 0.05 (its sign flips cannot reach the level sooner; deployed arms also fit a slot bias), and a typical service needs 20–30: `tandem validate` warns below those lines, and where the calibration says a threshold needs more. @default 30',
        ),
      count: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .optional()
        .describe(
          'Fixed horizon: exactly this many trials and one look at the end (min = max = count); not with min or max. At least 6 at alpha 0.05, or the look can never decide (`tandem validate` warns).',
        ),
      budget: positiveDuration
        .prefault('15m')
        .describe(
          "Wall time after which no further trial starts; still undecided then is inconclusive. The first look says how many trials, and how long, the workload's noise needs.",
        ),
      warmup: duration.prefault('3s').describe('Start of each trial whose outcomes are discarded (after prewarm).'),
      measure: positiveDuration.prefault('10s').describe('Measurement window of each trial.'),
      processes: z
        .number()
        .int()
        .min(1)
        .max(16)
        .default(1)
        .describe(
          "Fresh processes per arm in every trial of deployed arms (equal for both arms; every record goes to every process at replay.rate divided by their count, so the arm and its dependencies get replay.rate in all; each process is measured on its own). The arm's CPU per request and latency are its processes' mean, what a fleet of them pays: more processes average the lottery of fresh processes that are slow for their whole life instead of hiding it (docs/harness.md). `tandem calibrate` says when a workload shows such processes.",
        ),
      prestart: z
        .boolean()
        .default(false)
        .describe(
          "Start each trial's deployed arms during the previous trial's warm-up, where nothing is measured, so a trial no longer waits for two fresh processes to start (about a tenth of the demo's trials). They start where startCpus says (needed: keep it off the running arms' CPUs) and wait idle there until their trial; arms that would still be starting when the window opens should not be started early (docs/harness.md).",
        ),
      prewarm: z
        .number()
        .int()
        .min(0)
        .max(10_000)
        .default(20)
        .describe(
          "Requests each fresh arm of deployed arms is sent one at a time, both arms at once, before its trial's warm-up (the trial's first records; nothing measured, only their count kept with the trial). With prestart they are sent while the trial before runs, until its window ends, so a trial can warm up for less of its own time: a fresh runtime's first requests are where it compiles and sizes its heap (docs/harness.md). 0: none.",
        ),
      maxReplacements: z
        .number()
        .int()
        .min(0)
        .default(2)
        .describe('Trials failed for infrastructure reasons (an arm not ready, a load not achieved) that may be replaced.'),
      allowFingerprintMismatch: z.boolean().default(false).describe('Keep trials whose arms ran on different machines.'),
      slotCpus: z
        .array(cpuList)
        .length(2)
        .optional()
        .describe(
          'CPU lists (taskset -c) of slot A and slot B for deployed arms; arms swap slots every trial. The same list for both puts both arms on the same CPUs: on a shared machine, whatever else runs there then contends with both arms alike, and pairing cancels it (docs/harness.md).',
        ),
      startCpus: z
        .array(cpuList)
        .length(2)
        .optional()
        .describe(
          "CPU lists (taskset -c) where slot A's and slot B's arms start, both at once, before each is moved onto its slotCpus (needs them) once ready; nothing is measured while arms start. Where both slots share one CPU, two fresh processes started one after the other there cost a trial their two starts; started on two CPUs they cost one (docs/harness.md). Give each slot as many CPUs as its slotCpus: a runtime that sizes its threads by the CPUs it may use at start keeps that size. Unset: each arm starts on its slot's CPUs, slot A first.",
        ),
    })
    .superRefine((t, ctx) => {
      if (t.count !== undefined && (t.min !== undefined || t.max !== undefined))
        ctx.addIssue({ code: 'custom', message: 'give either count (a fixed horizon) or min and max (sequential), not both', path: ['count'] });
      const min = t.min ?? DEFAULT_MIN_TRIALS;
      const max = t.max ?? Math.max(min, DEFAULT_MAX_TRIALS);
      if (t.count === undefined && min > max) ctx.addIssue({ code: 'custom', message: `min (${min}) must be <= max (${max})`, path: ['min'] });
      if (t.startCpus !== undefined && t.slotCpus === undefined)
        ctx.addIssue({ code: 'custom', message: "startCpus needs slotCpus: arms are moved onto their slot's CPUs once started", path: ['startCpus'] });
      // Started early on the slots' own CPUs, arms would start, and then wait, on the CPUs the running trial measures.
      if (t.prestart && t.startCpus === undefined)
        ctx.addIssue({
          code: 'custom',
          message: 'prestart needs startCpus (and slotCpus): arms started early wait on their start CPUs, off the CPUs the running trial measures',
          path: ['prestart'],
        });
    })
    .transform((t) => {
      const min = t.count ?? t.min ?? DEFAULT_MIN_TRIALS;
      const max = t.count ?? t.max ?? Math.max(min, DEFAULT_MAX_TRIALS);
      // `count` stays as the most trials a run may take, for code and records that read it.
      return { ...t, min, max, count: max };
    })
    .prefault({}),
  dependencies: z.array(dependency).default([]).describe("The SUT's downstream calls and how the egress router contains them."),
  detectors: z.array(detector).default([]).describe('Dependency monitors that cancel the experiment on a sustained violation.'),
  checks: z.array(check).default([]).describe('Metrics judged, with direction and threshold.'),
  harness: harness.prefault({}).describe('How the verdict is reached and what responses are compared.'),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe("Experiments of this workload running at once across all workers (its resource reservation); default: no limit beyond the queue's."),
  calibration: z
    .strictObject({ every: positiveDuration.describe('Time between periodic A/A calibrations of this workload.') })
    .optional()
    .describe('Periodic A/A experiments keep the noise floor known (BullMQ: a repeatable job; inline: `tandem run --aa --every`).'),
  triggers: z
    .strictObject({
      targets: z.array(z.string().min(1)).default([]).describe("Build targets whose changes (or whose dependencies' changes) select this workload."),
      configFiles: z
        .array(z.string().min(1))
        .default([])
        .describe('Globs of config files whose changes select this workload when its service read them recently.'),
      service: z.string().min(1).optional().describe("Service name in the config consumption index; defaults to the workload's tier."),
      priority: z.enum(['high', 'normal', 'low']).default('normal'),
      sampleProbability: share.default(1).describe('Probability that a low-priority workload runs at diff time.'),
    })
    .prefault({}),
});

export const workloadSchema = workloadObject.transform((w) => ({ ...w, tier: w.tier ?? w.name }));

/** The workload a template gives for one build target: `{target}`, `{name}` (its last path segment) and `{dir}` replaced in every string. */
/**
 * A target name as a workload name: `@jest/core` → `jest-core`, `//svc/api:server` → `svc-api-server`.
 * Lower-cased; every run of characters a workload name cannot hold (`@`, `/`, `:`, `+`) becomes one `-`.
 */
export function targetSlug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[-._]+|-+$/g, '')
      .slice(0, 128) || 'target'
  );
}

export function instantiateTemplate(template: unknown, target: { readonly name: string; readonly dir: string }): unknown {
  const short =
    target.name
      .split(/[/:]/)
      .filter((part) => part !== '')
      .pop() ?? target.name;
  const slug = targetSlug(target.name);
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.replaceAll('{target}', target.name).replaceAll('{name}', short).replaceAll('{slug}', slug).replaceAll('{dir}', target.dir);
    if (Array.isArray(value)) return value.map(fill);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    return value;
  };
  const filled = fill({ name: '{name}', ...(template as Record<string, unknown>) }) as Record<string, unknown>;
  const triggers = (filled.triggers ?? {}) as Record<string, unknown>;
  return { ...filled, triggers: { ...triggers, targets: triggers.targets ?? [target.name] } };
}

const workloadTemplate = z
  .strictObject({
    targets: z
      .array(z.string().min(1))
      .min(1)
      .describe(
        'Globs over build target names (e.g. "@serving/*"; `*` stops at `/`, so scoped packages need "@*/*" or "**"): one workload per matching target.',
      ),
    workload: z
      .record(z.string(), z.unknown())
      .describe(
        'A workload whose strings may use {target}, {name} (the last segment of the target name), {slug} (the whole target name as a workload name: @jest/core → jest-core) and {dir}; `name` defaults to "{name}", `triggers.targets` to the target.',
      ),
  })
  .superRefine((t, ctx) => {
    // Checked once with a sample target, so a mistake is reported when the config is read.
    const parsed = workloadSchema.safeParse(instantiateTemplate(t.workload, { name: '@example/example', dir: 'packages/example' }));
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: ['workload', ...issue.path] });
  });
export const DEFAULT_GLOBAL_INPUTS = ['package-lock.json', 'yarn.lock', 'pnpm-lock.yaml', 'tsconfig.json', 'tandem.config.yaml'];

/** What cannot change a running service, in the spirit of Nx namedInputs and Turborepo inputs (docs/triggers.md). */
export const DEFAULT_INPUT_SETS: Readonly<Record<string, readonly string[]>> = {
  docs: ['**/*.{md,mdx,markdown,rst,adoc}', 'docs/**', '**/LICENSE{,.*}', '**/CHANGELOG{,.*}'],
  tests: [
    '**/*.{test,spec}.{js,jsx,ts,tsx,mjs,cjs,mts,cts}',
    '**/__tests__/**',
    '**/__mocks__/**',
    'test/**',
    'tests/**',
    'e2e/**',
    '**/*_test.{go,py}',
    '**/test_*.py',
  ],
  snapshots: ['**/__snapshots__/**', '**/*.snap'],
  stories: ['**/*.{stories,story}.{js,jsx,ts,tsx,mdx}', '.storybook/**'],
};
export const DEFAULT_IGNORED_INPUTS = ['docs', 'tests', 'snapshots', 'stories'];
const INPUT_SET_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

const triggersConfig = z
  .strictObject({
    graph: z
      .discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('workspaces'), root: z.string().min(1).optional().describe('Workspace root, relative to the repository root.') }),
        z.strictObject({ kind: z.literal('json'), file: z.string().min(1).describe('A JSON build graph export: {"targets": [{"name", "srcs", "deps"}]}.') }),
        z.strictObject({ kind: z.literal('nx'), file: z.string().min(1).describe('The output of `nx graph --file=<file>`.') }),
        z.strictObject({ kind: z.literal('turbo'), file: z.string().min(1).describe('The output of `turbo run build --dry=json`.') }),
        z.strictObject({
          kind: z.literal('bazel'),
          file: z.string().min(1).describe("The output of `bazel query 'deps(//...)' --output=streamed_jsonproto` (or jsonproto)."),
        }),
      ])
      .optional()
      .describe(
        'Where the build graph comes from: npm/yarn/pnpm workspaces, or an export of Nx, Turborepo, Bazel or a generic JSON graph. Read at both ends of a change.',
      ),
    globalInputs: z
      .union([z.array(z.string().min(1)), z.strictObject({ extend: z.array(z.string().min(1)).describe('Added to the defaults.') })])
      .default(DEFAULT_GLOBAL_INPUTS)
      .transform((g) => (Array.isArray(g) ? g : [...DEFAULT_GLOBAL_INPUTS, ...g.extend]))
      .describe(
        `Files whose change selects every workload (the graph file itself always is one). A list replaces the defaults (${DEFAULT_GLOBAL_INPUTS.join(', ')}); { extend: [...] } adds to them.`,
      ),
    ignore: z
      .array(z.string().min(1))
      .default([])
      .describe('Globs of files owned by no target that select nothing (otherwise such a file selects everything).'),
    inputSets: z
      .record(
        z.string().regex(INPUT_SET_NAME, { error: 'an input set name is letters, digits, "_" or "-", starting with a letter' }),
        z.array(z.string().min(1)),
      )
      .default({})
      .transform((sets) => ({ ...DEFAULT_INPUT_SETS, ...sets }))
      .describe(
        `Named sets of file patterns, relative to a target's root (its directory), merged over the defaults by name: ${Object.keys(DEFAULT_INPUT_SETS).join(', ')}.`,
      ),
    ignoredInputs: z
      .array(z.string().min(1))
      .default(DEFAULT_IGNORED_INPUTS)
      .describe(
        "Input sets (by name) or patterns, relative to each target's root, whose files cannot change a running service: a change to them alone selects nothing. Also applied, relative to the repository root, to files no target owns.",
      ),
    targetInputs: z
      .array(
        z.strictObject({
          targets: z.array(z.string().min(1)).min(1).describe('Globs over target names.'),
          ignoredInputs: z.array(z.string().min(1)).describe('Replaces triggers.ignoredInputs for these targets.'),
        }),
      )
      .default([])
      .describe('Per-target ignored inputs; the first entry whose targets match a target applies to it.'),
    narrowLockfile: z
      .boolean()
      .default(true)
      .describe(
        'A lockfile change (package-lock.json, yarn.lock v1 and Berry, pnpm-lock.yaml) selects only the packages whose resolved dependency closure changed (and their dependents), instead of everything; an unreadable lockfile selects everything.',
      ),
    latticeFiles: z
      .array(z.string().min(1))
      .default(['lattices/**/*.{yaml,yml,json}', '**/*.lattice.{yaml,yml,json}'])
      .describe('Degradation lattice files: a change selects the workloads of services whose level changed in some state, with those states as candidates.'),
    configRecency: positiveWindow.prefault('7d').describe('A config file or setting counts as read when a service read it this recently.'),
  })
  .superRefine((t, ctx) => {
    // A bare word is an input set's name; a typo must not silently become a pattern matching one file name.
    const lists: [(string | number)[], readonly string[]][] = [
      [['ignoredInputs'], t.ignoredInputs],
      ...t.targetInputs.map((e, i): [(string | number)[], readonly string[]] => [['targetInputs', i, 'ignoredInputs'], e.ignoredInputs]),
    ];
    for (const [path, list] of lists) {
      list.forEach((entry, j) => {
        if (isInputSetName(entry) && !(entry in t.inputSets))
          ctx.addIssue({
            code: 'custom',
            path: [...path, j],
            message: `"${entry}" is not an input set (known: ${Object.keys(t.inputSets).join(', ')}); write a pattern such as "**/${entry}" for a file name`,
          });
      });
    }
  });

/** An entry of ignoredInputs naming a set rather than giving a pattern. */
export const isInputSetName = (entry: string): boolean => INPUT_SET_NAME.test(entry);

export const configSchema = z.strictObject({
  $schema: z.string().optional().describe("Editors' schema hint; ignored."),
  store: z
    .discriminatedUnion('kind', [localStore, clickhouseStore])
    .prefault({ kind: 'local' })
    .describe('Where corpora, samples and experiment records live: local files (default) or ClickHouse.'),
  queue: z
    .discriminatedUnion('kind', [inlineQueue, bullmqQueue])
    .prefault({ kind: 'inline' })
    .describe('How experiments are run: in this process (default) or by `tandem worker`s through Redis.'),
  recorder: recorder.prefault({}).describe('Sampling of production requests into the corpus.'),
  transport: transportSchema.prefault({}).describe('HTTP/2 and body limits of the sidecar, the router and the replayer.'),
  workloads: z.array(workloadSchema).default([]).describe('What to replay and how to judge it.'),
  workloadTemplates: z
    .array(workloadTemplate)
    .default([])
    .describe(
      'Workloads made per build target (e.g. one per package), for selection by `tandem affected` and `submit`; a workload written out with the same name wins.',
    ),
  lattices: z.array(latticeSchema).default([]).describe('Degradation lattices (HiLO product states L0..Ln).'),
  triggers: triggersConfig.prefault({}).describe('How a change selects workloads: build graph, global inputs, config consumption.'),
});

export type TandemConfig = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
export type StoreConfig = TandemConfig['store'];
export type QueueConfig = TandemConfig['queue'];
export type RecorderConfig = TandemConfig['recorder'];
export type WorkloadConfig = TandemConfig['workloads'][number];
export type DependencyConfig = WorkloadConfig['dependencies'][number];
export type DetectorConfig = WorkloadConfig['detectors'][number];
export type CheckConfig = WorkloadConfig['checks'][number];

/** JSON Schema (draft 2020-12) of the config file as written, for editors and `tandem schema`. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
