/**
 * One measurement of the scale bench in a process of its own, so its peak
 * RSS is its own: `node --import tsx bench/support/scale-measure.ts <mode>
 * <project dir> <experiment id>`. Modes: `report` (`tandem report --format
 * json`, the CLI in this process), `calibrate` (what `tandem calibrate` does
 * after its replay) and their baselines `report-full-load`, `calibrate-full-load`
 * (full-load-judge.ts). Prints one line to stderr: `SCALE {"seconds":…,"peakRssMb":…}`.
 */
import { loadConfig } from '../../core/index.js';
import { createStore } from '../../store/index.js';
import { main } from '../../cli/main.js';
import { processContext } from '../../cli/cli-context.js';
import { calibrateStored } from '../../harness/index.js';
import { fullLoadCalibration, fullLoadReport } from './full-load-judge.js';

const [mode, dir, id] = process.argv.slice(2);
if (mode === undefined || dir === undefined || id === undefined)
  throw new Error('usage: scale-measure.ts <report|report-full-load> <project dir> <experiment id>');
process.chdir(dir);
const started = performance.now();
let code = 0;
if (mode === 'report') {
  // argv as the bin passes it: node, script, then the command.
  code = await main([process.execPath, 'tandem', 'report', id, '--format', 'json'], processContext());
} else if (mode === 'report-full-load') {
  const { config } = await loadConfig({ cwd: dir });
  const store = createStore(config.store, { cwd: dir });
  await fullLoadReport(store, id, config.workloads[0]!);
  await store.close();
} else if (mode === 'calibrate' || mode === 'calibrate-full-load') {
  const { config } = await loadConfig({ cwd: dir });
  const store = createStore(config.store, { cwd: dir });
  const workload = config.workloads[0]!;
  const { calibration } =
    mode === 'calibrate'
      ? await calibrateStored(store, id, { workload, createdAtMs: Date.now() })
      : { calibration: await fullLoadCalibration(store, id, workload) };
  if (!(calibration.trials > 0)) throw new Error('calibrated nothing');
  await store.close();
} else throw new Error(`unknown mode ${mode}`);
const seconds = (performance.now() - started) / 1000;
// 0 passed, 1 regressed, 5 inconclusive: a judged report; anything else is an error, not a measurement.
if (![0, 1, 5].includes(code)) throw new Error(`tandem report exited ${code}`);
// maxRSS is in kilobytes.
process.stderr.write(`SCALE ${JSON.stringify({ seconds, peakRssMb: process.resourceUsage().maxRSS / 1024, code })}\n`);
process.exit(0);
