/**
 * `npm run bench -- demo`: `tandem demo` end to end in a child
 * process, as a new user runs it. The target is the issue's: under 3 minutes
 * on a 2-core machine. The baseline, measured from the same run, is the time
 * the story itself schedules (recording, every trial's warm-up and
 * measurement window, the capacity profile): the ratio says how much the
 * platform adds on top (process starts, deploys per trial, judging, reports).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DemoResult } from '../examples/demo/run-demo.js';
import { parseConfigText } from '../core/index.js';

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-demo-'));
  try {
    const started = performance.now();
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'tandem.js'), 'demo', '--json'], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('close', (exitCode) => resolve({ code: exitCode, out: text }));
    });
    const totalSeconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`tandem demo exited ${code}`);
    const result = JSON.parse(out) as DemoResult;
    const config = parseConfigText(await readFile(join(dir, '.tandem', 'demo', 'tandem.config.yaml'), 'utf8'), 'demo');
    const trials = config.workloads[0]!.trials;
    const capacity = result.steps.find((s) => s.step === 5)!.details!.profile as { leadMs: number; rampMs: number; holdMs: number; cooldownMs: number };
    // Recording, the trials the sequential judge took in the two judged experiments, the cancelled one's first
    // trial (at most), the capacity profile (lead, ramp, hold, cooldown).
    const recordingSeconds = result.recordingMs / 1000;
    const trialSeconds = (trials.warmup + trials.measure) / 1000;
    const judgedTrials = [1, 2].reduce((sum, n) => sum + Number(result.steps.find((s) => s.step === n)!.details!.trials ?? 0), 0);
    const capacitySeconds = (capacity.leadMs + capacity.rampMs + capacity.holdMs + capacity.cooldownMs) / 1000;
    // The recording ends when the corpus holds a trial's records: its length is measured, so the sum is rounded.
    const scheduledSeconds = Number((recordingSeconds + (judgedTrials + 1) * trialSeconds + capacitySeconds).toFixed(1));
    const figures = {
      baseline: 'the time the story itself schedules in the same run (recording, the trial windows the sequential judge took, capacity profile)',
      judgedTrials,
      totalSeconds: Number(totalSeconds.toFixed(1)),
      scheduledSeconds,
      overheadRatio: Number((totalSeconds / scheduledSeconds).toFixed(2)),
      stepsAsExpected: result.steps.filter((s) => s.asExpected).length,
    };
    process.stderr.write(
      `tandem demo: ${figures.totalSeconds} s in all, ${scheduledSeconds} s of it scheduled by the story (x${figures.overheadRatio}); ${figures.stepsAsExpected}/5 steps as expected\n`,
    );
    // The 3-minute target is the issue's, for the whole demo as a user runs it.
    const targets = { totalSeconds: { value: figures.totalSeconds, max: 180 }, stepsAsExpected: { value: figures.stepsAsExpected, min: 5 } };
    process.stdout.write(`${JSON.stringify({ bench: 'demo', figures, targets })}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
