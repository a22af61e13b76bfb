import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { scorerCorpus, startFeatureStore } from '../examples/scorer/index.js';
const features = await startFeatureStore({ delayMs: 0 });
const corpus = scorerCorpus(600, { seed: 9 });
const ticks = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return Number(f[11]) + Number(f[12]); };
for (const round of [1, 2]) for (const work of [1, 1.05, 1.08, 1.1]) {
  const child = spawn(process.execPath, ['examples/scorer/run.mjs', '--port', '0', '--work', String(work)], { env: { ...process.env, FEATURES_URL: features.url }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((r) => child.stdout!.on('data', (c: Buffer) => { const m = /listening on (\S+)/.exec(c.toString()); if (m) r(m[1]!); }));
  const send = async (rec: (typeof corpus)[number]) => { await (await fetch(url + rec.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from(rec.body!, 'base64') })).arrayBuffer(); };
  for (const rec of corpus.slice(0, 200)) await send(rec);
  const t0 = ticks(child.pid!);
  for (const rec of corpus) await send(rec);
  const t1 = ticks(child.pid!);
  console.log(`round ${round} work ${work}: ${((t1 - t0) * 10 / corpus.length).toFixed(3)} ms/request`);
  child.kill();
}
await features.close();
