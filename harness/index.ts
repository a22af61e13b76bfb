/** Judging experiments: statistics, verdicts, calibration, response and ranking comparison, checks, fuzzing, reports. */
export { ndcgAtK, ndcgAtKWithLabels, kendallTau, overlapAtK } from './compare/ranking-metrics.js';
export {
  studentTCdf,
  studentTQuantile,
  regularizedIncompleteBeta,
  tInterval,
  benjaminiHochberg,
  fCdf,
  varianceConsistent,
  bootstrapInterval,
  meanInterval,
  quantileOf,
  quantileInPlace,
  type TInterval,
} from './stats.js';
export { trialMetrics, BUILT_IN_METRICS, type TrialMetric, type TrialData, type EffectScale } from './metrics/trial-metrics.js';
export { metricPolicies, defaultThreshold, type MetricPolicy, type Direction } from './metrics/metric-policy.js';
export { comparedText } from './reports/compared-text.js';
export { formatEffect, formatP, joinSentences } from './wording.js';
export {
  judge,
  type MetricVerdict,
  type MetricVerdictKind,
  type MetricLook,
  type ExperimentVerdict,
  type ExperimentOutcome,
  type JudgeOptions,
  type OnInconclusive,
} from './judge/verdict.js';
export {
  fitLook,
  lookAccumulator,
  sequentialBoundary,
  hasLaw,
  lawAtHand,
  criticalValue,
  ar1VarianceFactor,
  varianceInflation,
  plannedStandardError,
  MIN_DF,
  EXACT_TOLERANCE,
  type LookFit,
  type SequentialDesign,
  type Boundary,
  type SerialCorrelation,
  type LookEstimator,
} from './judge/sequential.js';
export { judgeSequentially, lookByLook, type SequentialRun } from './judge/sequential-run.js';
export { simulateLawInBackground, lawOfWorkload } from './judge/background-law.js';
export { fileLawCache, lawCacheDir, useLawCache, type LawCache } from './judge/law-cache.js';
export { signFlipP } from './judge/sign-flip.js';
export { designWarnings, fewestDecidingTrials, thresholdWarnings, type DesignToCheck, type ThresholdsToCheck } from './judge/design-check.js';
export { calibrate, wilsonInterval, type Calibration, type MetricCalibration } from './calibration/calibration.js';
export {
  deployedArmsOf,
  loadExperimentData,
  selectTrials,
  slotSign,
  missingDataCauses,
  type ExperimentData,
  type ExcludedTrial,
  type SlotSign,
  type TrialSelection,
} from './metrics/experiment-data.js';
export { calibrateStored } from './calibration/calibrate-stored.js';
export { measureCompletedTrial, trialDataOf, TRIAL_METRICS_EVENT } from './metrics/stored-trial-metrics.js';
export { implausibility } from './metrics/stored-metric-check.js';
export { armDistributions, SUMMARY_QUANTILE_ERROR, type ArmDistributions } from './metrics/arm-summary.js';
export { loadGrpcSchema, type GrpcSchema } from '../net/index.js';
export { compareResponses, compareResponseStream, type ResponseComparison, type FieldDifference, type RankingComparison } from './compare/compare-responses.js';
export {
  defineChecks,
  LiveOutcomes,
  duringCheckDetector,
  runFinalChecks,
  configuredFinalChecks,
  loadChecksModule,
  type CheckSet,
  type DuringCheck,
  type FinalCheck,
  type FinalCheckResult,
  type CheckOutcome,
} from './checks/checks.js';
export {
  fuzz,
  mutateRequest,
  MUTATIONS,
  JSON_CONTRACT,
  type FuzzOptions,
  type FuzzReport,
  type FuzzFinding,
  type ResponseProperty,
  type Mutation,
} from './compare/fuzz.js';
export { evaluateExperiment, lookAtExperiment, designOf, REPORT_SCHEMA, type ExperimentReport, type ArmSummary } from './checks/evaluate.js';
export { renderJson } from './reports/json-report.js';
export { renderMarkdown } from './reports/markdown-report.js';
export { renderSummaryMarkdown } from './reports/summary-markdown.js';
export { renderText, markdownForTerminal } from './reports/text-report.js';
export { renderHtml, reportSections, type DrawChart } from './reports/html-report.js';
export { escapeHtml, escapeMarkdownCell } from './reports/escape.js';
export {
  lineChart,
  intervalChart,
  barChart,
  lineChartSpec,
  intervalChartSpec,
  barChartSpec,
  renderChartSvg,
  type ChartSpec,
  type Series,
} from './reports/charts.js';
