/**
 * FIRE's offline evaluation of setting-level config triggers: replay the
 * config changes of a period, and for each (change, service that reads the
 * file) compare file-level selection with setting-level selection. Reports
 * how many file-level selections the refinement suppresses, and how many of
 * the suppressed changed settings the service read afterwards (a miss: the
 * refinement skipped a change the service did consume).
 *
 * The index keeps the latest read per (service, file, setting), so "read
 * before the change" is approximated by a latest read within the recency
 * window before it, and a latest read after the change counts as "read
 * later" — which over-counts misses, never under-counts them.
 */
import type { ConfigReadSummary } from '../store/index.js';
import { commitsSince, fileAt } from './git.js';
import { changedSettings } from './config-diff.js';

export interface ConfigTriggerEvaluation {
  readonly sinceMs: number;
  readonly commits: number;
  /** Config file changes (commit × file) of files some service reads. */
  readonly configChanges: number;
  /** (change, reading service) pairs: what file-level triggers would run. */
  readonly fileLevelSelections: number;
  readonly settingLevelSelections: number;
  readonly suppressed: number;
  readonly suppressedShare: number;
  /** Changed settings in suppressed selections, and how many of them the service read after the change. */
  readonly suppressedSettings: number;
  readonly suppressedSettingsReadLater: number;
  readonly readLaterShare: number;
  /** Selections kept at file level for lack of per-setting evidence or a comparable format. */
  readonly fileLevelFallbacks: number;
}

export async function evaluateConfigTriggers(options: {
  repo: string;
  sinceMs: number;
  reads: readonly ConfigReadSummary[];
  recencyMs: number;
}): Promise<ConfigTriggerEvaluation> {
  const commits = await commitsSince(options.repo, options.sinceMs);
  const readers = new Map<string, ConfigReadSummary[]>();
  for (const r of options.reads) readers.set(r.file, [...(readers.get(r.file) ?? []), r]);
  let configChanges = 0;
  let fileLevel = 0;
  let settingLevel = 0;
  let fallbacks = 0;
  let suppressedSettings = 0;
  let readLater = 0;
  for (const commit of commits) {
    for (const file of commit.files) {
      const reads = readers.get(file);
      if (!reads) continue;
      configChanges++;
      const [before, after] = await Promise.all([
        commit.parent ? fileAt(options.repo, commit.parent, file) : Promise.resolve(undefined),
        fileAt(options.repo, commit.commit, file),
      ]);
      const settings = changedSettings(file, before, after);
      for (const service of new Set(reads.map((r) => r.service))) {
        fileLevel++;
        const settingReads = reads.filter((r) => r.service === service && r.setting !== '');
        if (settings === undefined || settingReads.length === 0) {
          fallbacks++;
          settingLevel++;
          continue;
        }
        const touches = (setting: string, r: ConfigReadSummary): boolean =>
          r.setting === setting || setting.startsWith(`${r.setting}.`) || r.setting.startsWith(`${setting}.`);
        const readBefore = settings.filter((s) =>
          settingReads.some((r) => touches(s, r) && r.lastReadMs < commit.timeMs && r.lastReadMs >= commit.timeMs - options.recencyMs),
        );
        if (readBefore.length > 0) {
          settingLevel++;
          continue;
        }
        suppressedSettings += settings.length;
        readLater += settings.filter((s) => settingReads.some((r) => touches(s, r) && r.lastReadMs >= commit.timeMs)).length;
      }
    }
  }
  const suppressed = fileLevel - settingLevel;
  return {
    sinceMs: options.sinceMs,
    commits: commits.length,
    configChanges,
    fileLevelSelections: fileLevel,
    settingLevelSelections: settingLevel,
    suppressed,
    suppressedShare: fileLevel > 0 ? suppressed / fileLevel : 0,
    suppressedSettings,
    suppressedSettingsReadLater: readLater,
    readLaterShare: suppressedSettings > 0 ? readLater / suppressedSettings : 0,
    fileLevelFallbacks: fallbacks,
  };
}
