import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { compiledBuild } from '../../bin/compiled-build.js';
import { rankingArmCommand, TANDEM_BIN } from '../../examples/demo/demo-project.js';
import { serviceArguments, serviceConfigFromEnv } from '../../examples/stack/run-service.js';
import { MAX_CROSS_ROUNDS } from '../../examples/stack/model.js';
import { grpcHealth, reflectDescriptorSet } from '../../net/index.js';
import { REPO_ROOT } from '../support/cli.js';

describe('the example services’ process entry', () => {
  it('takes a service and its faults, as a deploy command’s {revision} gives them, and names any other argument', () => {
    expect(serviceArguments(['ranking'])).toEqual({ service: 'ranking' });
    expect(serviceArguments(['ranking', '--faults=latency=5'])).toEqual({ service: 'ranking', faults: { latencyPercent: 5 } });
    expect(serviceArguments(['ranking', '--faults', 'latency=5,latent-timeout'])).toEqual({
      service: 'ranking',
      faults: { latencyPercent: 5, latentTimeout: true },
    });
    // The control build's revision is empty: no faults.
    expect(serviceArguments(['ranking', '--faults='])).toEqual({ service: 'ranking', faults: {} });
    expect(() => serviceArguments([])).toThrow(/first argument must be one of query, ranking/);
    expect(() => serviceArguments(['rankings'])).toThrow(/got "rankings"/);
    expect(() => serviceArguments(['ranking', '--port', '80'])).toThrow(/unknown argument "--port"/);
    expect(() => serviceArguments(['ranking', '--faults'])).toThrow(/--faults needs a list/);
    expect(() => serviceArguments(['ranking', '--faults=latency=x'])).toThrow(/fault "latency" needs a number/);
    expect(() => serviceArguments(['ranking', '--faults=', '--faults=latency=1'])).toThrow(/twice/);
  });

  it('takes ranking’s rounds of feature crossing from STACK_CROSS_ROUNDS, 1 to MAX_CROSS_ROUNDS, and names the variable otherwise', () => {
    expect(serviceConfigFromEnv({ STACK_CROSS_ROUNDS: '144' })).toMatchObject({ crossRounds: 144 });
    expect(serviceConfigFromEnv({})).not.toHaveProperty('crossRounds');
    expect(serviceConfigFromEnv({ STACK_CROSS_ROUNDS: String(MAX_CROSS_ROUNDS) })).toMatchObject({ crossRounds: MAX_CROSS_ROUNDS });
    for (const bad of ['0', String(MAX_CROSS_ROUNDS + 1), '1e9', 'many', '-3', '2.5'])
      expect(() => serviceConfigFromEnv({ STACK_CROSS_ROUNDS: bad })).toThrow(/STACK_CROSS_ROUNDS/);
  });

  describe('bundled into one file by the compiled build, as the demo’s arms run it', () => {
    const entryOf = async (): Promise<string> => join(await compiledBuild(REPO_ROOT), 'examples', 'stack', 'service-main.js');

    function start(entry: string, args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
      // stdin is /dev/null, as for a deployed arm.
      const child = spawn(process.execPath, [entry, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      onTestFinished(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      return child;
    }

    /** The process's ready line; its exit first (with what it printed on stderr) fails the test at once. */
    async function readyLine(child: ChildProcess): Promise<Record<string, unknown>> {
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = once(child, 'exit').then(([code]) => Promise.reject(new Error(`exited ${String(code)} before it was ready: ${stderr}`)));
      const [line] = (await Promise.race([once(createInterface({ input: child.stdout! }), 'line'), exited])) as [string];
      return JSON.parse(line) as Record<string, unknown>;
    }

    it('is one self-contained module: no relative import and no package import left to resolve at start', async () => {
      const text = await readFile(await entryOf(), 'utf8');
      expect(text).not.toMatch(/^import .* from ["']\.\.?\//m);
      expect(text).not.toMatch(/^import .* from ["'](prom-client|undici|@grpc\/grpc-js|@grpc\/proto-loader)["']/m);
      // The service's own code is in it.
      expect(text).toContain('work_units_per_candidate');
    }, 120_000);

    it('serves ranking from the environment a deployment gives it and stays up with stdin closed', async () => {
      const child = start(await entryOf(), ['ranking', '--faults=latency=5'], {
        PORT: '0',
        FEATURES_URL: 'http://127.0.0.1:9',
        INFERENCE_URL: 'http://127.0.0.1:9',
        INFERENCE_PROTOCOL: 'grpc',
      });
      const ready = (await readyLine(child)) as { ready: boolean; service: string; urls: string[] };
      expect(ready).toMatchObject({ ready: true, service: 'ranking' });
      // Its stdin ended at once (/dev/null); a process configured over stdin would have taken that as its parent's exit.
      const health = await fetch(`${ready.urls[0]}/healthz`);
      expect(health.status).toBe(200);
      const metrics = await (await fetch(`${ready.urls[0]}/metrics`)).text();
      expect(metrics).toContain('work_units_per_candidate');
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
    }, 120_000);

    it('serves prediction, whose gRPC libraries read .proto files beside themselves, and answers gRPC health and reflection', async () => {
      const child = start(await entryOf(), ['prediction'], { PORT: '0', STACK_SHARDS: '1' });
      const ready = (await readyLine(child)) as { ready: boolean; grpcUrls: string[] };
      expect(ready.ready).toBe(true);
      expect((await grpcHealth(ready.grpcUrls[0]!, '', 5_000)).serving).toBe(true);
      // Reflection loads its own .proto from its package folder when asked: the bundle gives it that folder.
      const descriptors = await reflectDescriptorSet(ready.grpcUrls[0]!, ['inference.GRPCInferenceService'], 5_000);
      expect(Buffer.from(descriptors).toString('latin1')).toContain('ModelInfer');
    }, 120_000);

    it('exits 3 on a bad argument or fault, naming it', async () => {
      const entry = await entryOf();
      for (const [args, named] of [
        [['ranking', '--port', '1'], '--port'],
        [['ranking', '--faults=latency=much'], 'latency'],
        [['ranker'], 'ranker'],
      ] as const) {
        const child = start(entry, args, { PORT: '0' });
        let stderr = '';
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const [code] = (await once(child, 'exit')) as [number | null];
        expect(code).toBe(3);
        expect(stderr).toContain(named);
      }
    }, 120_000);
  });

  it('is what the demo deploys its arms with, free of runtime flags: from the compiled build its own entry, from source the CLI', () => {
    const compiled = rankingArmCommand(pathToFileURL('/opt/build/examples/demo/demo-project.js').href);
    expect(compiled).toBe(`'${process.execPath}' '/opt/build/examples/stack/service-main.js' ranking --faults={revision}`);
    expect(rankingArmCommand(pathToFileURL('/src/examples/demo/demo-project.ts').href)).toBe(
      `'${process.execPath}' '${TANDEM_BIN}' example-stack --service ranking --port {port} --faults={revision}`,
    );
  });
});
