import { describe, expect, it } from 'vitest';
import { metricValue } from '../../harness/reports/metric-value.js';
import { intervalHeading } from '../../harness/reports/sequential-text.js';
import {
  REPORT_SCHEMA,
  comparedText,
  escapeHtml,
  escapeMarkdownCell,
  renderHtml,
  renderJson,
  renderMarkdown,
  renderSummaryMarkdown,
  type ExperimentReport,
  type MetricVerdict,
} from '../../harness/index.js';

const HOSTILE = `<script>alert('x')</script><img src=x onerror="alert(1)">|**bold**|[link](javascript:alert(1))\n# heading`;

const metric = (name: string, judged: boolean): MetricVerdict => ({
  metric: name,
  unit: 'ms',
  scale: 'relative',
  judged,
  ...(judged ? { policy: { metric: name, direction: 'increase-is-bad' as const, threshold: 0.02, critical: true, mustHaveData: true } } : {}),
  control: 10,
  treatment: 11,
  trials: 2,
  points: 100,
  estimate: 0.1,
  low: 0.05,
  high: 0.15,
  pValue: 0.01,
  adjustedP: judged ? 0.02 : Number.NaN,
  sd: 0.01,
  minimumDetectableEffect: 0.03,
  df: 1,
  noise: 'own trials',
  decided: true,
  looks: [
    { trials: 2, estimate: 0.1, low: 0.05, high: 0.15 },
    { trials: 3, estimate: 0.1, low: 0.06, high: 0.14 },
  ],
  verdict: 'regression',
  reason: `regression because ${HOSTILE}`,
});

/** A report with a hostile string in every field a renderer shows. */
function hostileReport(): ExperimentReport {
  return {
    schema: REPORT_SCHEMA,
    generatedAt: '2026-11-30T12:00:00.000Z',
    experiment: { id: 'exp-1', workload: `w${HOSTILE}`, status: 'completed', seed: 1, createdAt: 'c', updatedAt: 'u', reason: HOSTILE, spec: {} },
    verdict: {
      outcome: 'inconclusive',
      reasons: [HOSTILE],
      alpha: 0.05,
      trials: 2,
      design: { minTrials: 2, maxTrials: 4 },
      decided: false,
      undecided: [HOSTILE],
    },
    metrics: [metric(`latency${HOSTILE}`, true), metric(`counter${HOSTILE}`, false)],
    perTrial: [0, 1].map((trial) => ({ metric: `latency${HOSTILE}`, trial, control: 10, treatment: 11, effect: 0.1, low: 0.05, high: 0.15 })),
    trials: [{ index: 0, attempt: 1, status: 'completed', reason: HOSTILE, slots: { control: HOSTILE } }],
    excludedTrials: [{ index: 1, attempt: 1, status: 'excluded', reason: HOSTILE }],
    arms: {
      control: { requests: 1, errors: 0, errorsByClass: {}, latencyMs: { mean: 1, p50: 1, p90: 1, p99: 1, max: 1 }, bytesMean: 1 },
      treatment: { requests: 1, errors: 0, errorsByClass: {}, latencyMs: { mean: 1, p50: 1, p90: 1, p99: 1, max: 1 }, bytesMean: 1 },
    },
    latencyCdf: {
      control: [
        [1, 0],
        [2, 1],
      ],
      treatment: [
        [1, 0],
        [3, 1],
      ],
    },
    detectors: [
      {
        name: `det${HOSTILE}`,
        observations: [
          { timeMs: 1_000, value: 1, verdict: 'violation', message: HOSTILE },
          { timeMs: 2_000, value: 2, verdict: 'violation' },
        ],
      },
    ],
    cancellation: { detector: `det${HOSTILE}`, reason: HOSTILE, firstViolationMs: 1_000, terminatedMs: 2_000 },
    fanout: [
      {
        dependency: `dep${HOSTILE}`,
        arm: 'treatment',
        policy: 'pinned',
        calls: 10,
        errors: 0,
        blocked: 3,
        refused: 2,
        byTarget: { [`http://127.0.0.1:9/${HOSTILE}`]: 10 },
        fanOut: 2,
      },
      { dependency: 'features', arm: 'control', policy: 'isolated', calls: 4, errors: 0, blocked: 0, refused: 0, byTarget: {}, fanOut: null },
    ],
    comparison: {
      pairs: 1,
      comparedBodies: 1,
      skipped: { [`gzip body could not be decoded${HOSTILE}`]: 1 },
      endpoints: [
        {
          endpoint: `GET /p/:id${HOSTILE}`,
          pairs: 2,
          differing: 1,
          share: 0.5,
          statusMismatches: 0,
          notCompared: 1,
          fields: [
            { path: `f${HOSTILE}`, share: 1, counted: true },
            { path: `ts${HOSTILE}`, share: 1, counted: false },
          ],
          example: {
            recordId: HOSTILE,
            request: { method: 'GET', path: `/p/1${HOSTILE}`, body: HOSTILE },
            control: { status: 200, body: `{"f":"${HOSTILE}"}` },
            treatment: { status: 200, body: `{"f":"x${HOSTILE}"}` },
            differingFields: [`f${HOSTILE}`],
            noiseFields: [`ts${HOSTILE}`],
          },
        },
      ],
      statusMismatches: 0,
      statusMismatchShare: 0,
      statusExamples: [],
      bodyHashAgreement: 0,
      semanticAgreement: 0,
      noiseCancellation: false,
      fields: [{ path: `f${HOSTILE}`, rate: 1, noiseRate: Number.NaN, ignored: false, example: { recordId: HOSTILE, control: HOSTILE, treatment: HOSTILE } }],
    },
    finalChecks: [{ name: `check${HOSTILE}`, ok: false, message: HOSTILE }],
    notes: [HOSTILE],
  };
}

const ALLOWED_TAGS = new Set([
  'html',
  'head',
  'meta',
  'title',
  'style',
  'body',
  'h1',
  'h2',
  'h3',
  'p',
  'ul',
  'li',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'span',
  'svg',
  'rect',
  'text',
  'polyline',
  'line',
  'circle',
  'details',
  'summary',
  'code',
  'strong',
  'div',
  'pre',
  'figure',
  'path',
  'g',
  'defs',
  'clippath',
  'tspan',
  'polygon',
]);

describe('report rendering escapes what it renders', () => {
  it('HTML: only the renderer’s own tags, no script, no event handlers, no external assets', () => {
    const page = renderHtml(hostileReport());
    const tags = [...page.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!.toLowerCase());
    expect(tags.filter((t) => !ALLOWED_TAGS.has(t))).toEqual([]);
    // Every real tag (a "<" in content is escaped) is free of event handlers and external references.
    const realTags = page.match(/<[a-zA-Z][^>]*>/g)!;
    // Attribute values are escaped (no raw quote inside), so dropping them leaves only attribute names.
    const attributeNames = realTags.map((tag) => tag.replace(/"[^"]*"/g, '""'));
    expect(attributeNames.filter((tag) => /\son[a-z]+\s*=|\s(src|href)\s*=/i.test(tag))).toEqual([]);
    expect(page).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
    expect(page).toContain('Content-Security-Policy" content="default-src \'none\'');
    // The charts are drawn: CDF, per-trial intervals, detector checks with the cancellation, fan-out.
    expect(page.match(/<svg/g)!.length).toBeGreaterThanOrEqual(4);
    expect(page).toContain('cancelled by det&lt;script&gt;');
  });

  it('Markdown: markup neutralised, table cells cannot be broken out of', () => {
    const md = renderMarkdown(hostileReport());
    expect(md).not.toMatch(/<script|<img/);
    const tableRows = md.split('\n').filter((line) => line.startsWith('| latency'));
    expect(tableRows).toHaveLength(1);
    // Seven columns: the hostile pipes are escaped, not column separators.
    expect(tableRows[0]!.split(/(?<!\\)\|/).length - 2).toBe(7);
    expect(md).not.toMatch(/^# heading/m);
    expect(md).toContain('\\[link\\](javascript:alert(1))');
  });

  it('JSON: the model as is, NaN as null, parseable', () => {
    const parsed = JSON.parse(renderJson(hostileReport())) as { comparison: { fields: { noiseRate: unknown }[] }; metrics: { adjustedP: unknown }[] };
    expect(parsed.comparison.fields[0]!.noiseRate).toBeNull();
    expect(parsed.metrics[1]!.adjustedP).toBeNull();
  });

  it('says what was compared in the title of every format: revisions (commits shortened) and URLs, hostile ones escaped', () => {
    const base = 'a'.repeat(40);
    const report = hostileReport();
    const compared = {
      ...report,
      experiment: {
        ...report.experiment,
        workload: 'api',
        spec: { compared: { control: { revision: base }, treatment: { revision: `v2${HOSTILE}`, url: 'http://127.0.0.1:9' } } },
      },
    };
    const html = renderHtml(compared);
    expect(html).toMatch(
      /<title>Tandem inconclusive: api \(control aaaaaaaaaaaa vs treatment v2&lt;script&gt;[\s\S]* \(http:\/\/127\.0\.0\.1:9\)\) exp-1<\/title>/,
    );
    expect(html).toMatch(/<h1>.*api: control aaaaaaaaaaaa vs treatment v2&lt;script&gt;/);
    const md = renderMarkdown(compared);
    expect(md.split('\n')[0]).toMatch(/^### .* Tandem: inconclusive — api: control aaaaaaaaaaaa vs treatment v2/);
    expect(md.split('\n')[0]).not.toMatch(/<script/);
    // A queued experiment has no arms yet: its request says what it will compare.
    expect(comparedText({ request: { controlRevision: base, treatmentRevision: 'b'.repeat(40) } })).toBe('control aaaaaaaaaaaa vs treatment bbbbbbbbbbbb');
    expect(comparedText({ request: { control: 'http://127.0.0.1:1' } })).toBe('control http://127.0.0.1:1 vs treatment as configured');
    expect(comparedText({})).toBeUndefined();
  });

  it('shows the guardrail evidence in every format: blocked, refused and per-target calls, fan-out unknown when unattributed', () => {
    const report = hostileReport();
    const md = renderMarkdown(report);
    expect(md).toMatch(/\| dep.* \| pinned \| treatment \| 10 \| 3 \| 2 \| http:\/\/127\.0\.0\.1:9\/.* 10 \| 2\.00 \|/);
    expect(md).toMatch(/\| features \| isolated \| control \| 4 \| 0 \| 0 \| — \| unknown \|/);
    expect(md).toContain('does not forward `x-tandem-record`');
    const html = renderHtml(report);
    expect(html).toMatch(/<h2>Dependencies \(guardrails\)<\/h2>/);
    expect(html).toMatch(/<td class="n">3<\/td><td class="n">2<\/td><td><code>http:\/\/127\.0\.0\.1:9\/&lt;script&gt;/);
    expect(html).toContain('<span class="warn">unknown</span>');
    expect(JSON.parse(renderJson(report)).fanout[1].fanOut).toBeNull();
  });

  it("shows each trial's share of the arms' CPUs that other work took, where it was measured", () => {
    const report = {
      ...hostileReport(),
      trials: [
        { index: 0, attempt: 1, status: 'completed', otherWorkOnArmCpus: 0.62 },
        { index: 1, attempt: 1, status: 'completed' },
      ],
    };
    const html = renderHtml(report);
    expect(html).toContain("<th>Other work on the arms' CPUs</th>");
    expect(html).toMatch(/<tr><td>0<\/td><td>1<\/td><td>completed<\/td><td><\/td><td class="n"><\/td><td class="n">62%<\/td>/);
    expect(html).toMatch(/<tr><td>1<\/td><td>1<\/td><td>completed<\/td><td><\/td><td class="n"><\/td><td class="n"><\/td>/);
    expect(JSON.parse(renderJson(report)).trials[0].otherWorkOnArmCpus).toBe(0.62);
  });

  it('shows arm values with their units (RSS in MiB, latency in ms)', () => {
    expect(metricValue({ unit: 'bytes', scale: 'relative' }, 536_870_912)).toBe('512.0 MiB');
    expect(metricValue({ unit: 'ms', scale: 'relative' }, 12.3)).toBe('12.30 ms');
    expect(metricValue({ unit: 'share', scale: 'absolute' }, 0.0123)).toBe('0.0123');
    expect(metricValue({ unit: 'ms', scale: 'relative' }, Number.NaN)).toBe('n/a');
    // The demo's report showed 0.0099 beside 0.01 for a +2.8% change: both arms now keep three significant digits.
    expect(metricValue({ unit: 'cpu s/request', scale: 'relative' }, 0.0099)).toBe('0.00990 cpu s/request');
    expect(metricValue({ unit: 'cpu s/request', scale: 'relative' }, 0.010178)).toBe('0.0102 cpu s/request');
    expect(metricValue({ unit: 'ms', scale: 'relative' }, 0)).toBe('0.00 ms');
  });

  it('names the intervals’ level as the verdict’s α gives it: 99% for a workload judged at α = 0.01, in every format', () => {
    // The demo judges at α = 0.01 and its intervals are the 99% confidence sequence; the column said "95% CI".
    const base = hostileReport();
    const strict: ExperimentReport = { ...base, verdict: { ...base.verdict, alpha: 0.01 } };
    expect(renderHtml(strict)).toContain('<th>99% CI</th>');
    expect(renderHtml(strict)).not.toContain('95% CI');
    expect(renderMarkdown(strict)).toContain('| Effect | 99% CI | Verdict |');
    expect(renderSummaryMarkdown(strict).join('\n')).toContain('| Effect | 99% CI | Verdict |');
    expect(renderMarkdown(base)).toContain('| Effect | 95% CI | Verdict |');
    expect(intervalHeading(0.001)).toBe('99.9% CI');
    expect(intervalHeading(Number.NaN)).toBe('interval');
  });

  it('escape helpers', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(escapeMarkdownCell('a|b\nc')).toBe('a\\|b c');
    // Terminal escapes from repository or recorded names are shown, not acted on (a Markdown report is cat'ed too).
    expect(escapeMarkdownCell('pkg\u001b]0;t\u0007\u009b')).toBe('pkg\\u001b\\]0;t\\u0007\\u009b');
    expect(escapeHtml('pkg\u001b[2J\u202e')).toBe('pkg\\u001b[2J\\u202e');
    // Reads cleanly in a terminal: quotes and parentheses as they are; markup and link brackets neutralised.
    expect(escapeMarkdownCell(`"x" (y) <b> [z]`)).toBe('"x" (y) &lt;b&gt; \\[z\\]');
  });
});
