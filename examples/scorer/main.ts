/**
 * `node examples/scorer/run.mjs --port N [--work F]`: the plain scoring service (scorer-service.ts), its feature
 * store at FEATURES_URL. `--work` takes a revision-like value (`work=1.05`) or a number; empty is 1.
 */
import { startScorer } from './scorer-service.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};

const port = Number(flag('port') ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be a port number, got ${flag('port')}`);
const workText = (flag('work') ?? '').replace(/^work=/, '');
const work = workText === '' ? 1 : Number(workText);
if (!(work > 0 && work <= 10)) throw new Error(`--work must be a number in (0, 10], got ${JSON.stringify(workText)}`);
const featuresUrl = process.env.FEATURES_URL;
if (featuresUrl === undefined || !/^http:\/\/127\.0\.0\.1:\d+$/.test(featuresUrl)) throw new Error('FEATURES_URL must be http://127.0.0.1:PORT');
const { url, server } = await startScorer({ port, featuresUrl, work });
process.stdout.write(`scorer (work ${work}) listening on ${url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
