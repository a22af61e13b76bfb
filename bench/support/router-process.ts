/** The egress router in its own process for the router benchmark: one shared dependency in front of the upstream. Prints its URL. */
import { parseConfig } from '../../core/index.js';
import { startRouter } from '../../guardrails/index.js';

const upstream = process.argv[2]!;
const dependencies = parseConfig({
  workloads: [{ name: 'bench', tier: 'bench', dependencies: [{ name: 'upstream', policy: 'shared', target: upstream, writes: 'allow' }] }],
}).workloads[0]!.dependencies;
const router = await startRouter({ experimentId: 'bench', seed: 1, dependencies, arms: ['treatment'], connections: 128 });
process.stdout.write(`${JSON.stringify({ url: router.urls.treatment.upstream, pid: process.pid })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void router.close().then(() => process.exit(0)));
process.on('SIGINT', () => void router.close().then(() => process.exit(0)));
