/**
 * Private clickhouse-server and redis-server instances on free ports with temp
 * dirs, for tests and benchmarks. A missing binary fails with one line naming
 * the Debian package; nothing is assumed to be running already.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { freePort } from './free-port.js';

export interface PrivateService {
  readonly url: string;
  stop(): Promise<void>;
}

function findBinary(names: readonly string[], debianPackage: string): string {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/bin', '/usr/sbin', '/usr/local/bin']);
  for (const name of names) {
    for (const dir of dirs) {
      const path = join(dir, name);
      if (existsSync(path)) return path;
    }
  }
  throw new Error(`${names[0]} not found: install the Debian package "${debianPackage}" (apt-get install -y ${debianPackage}), as .ci/run does`);
}

async function waitFor(check: () => Promise<boolean>, child: ChildProcess, what: string, deadlineMs: number, log: () => string): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} before it was ready:\n${log()}`);
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} was not ready within ${deadlineMs} ms:\n${log()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function captureOutput(child: ChildProcess): () => string {
  let output = '';
  const add = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return () => output;
}

export async function startClickHouse(): Promise<PrivateService> {
  const binary = findBinary(['clickhouse-server'], 'clickhouse-server');
  const dir = await mkdtemp(join(tmpdir(), 'tandem-clickhouse-'));
  const [httpPort, tcpPort] = [await freePort(), await freePort()];
  const users = existsSync('/etc/clickhouse-server/users.xml') ? '/etc/clickhouse-server/users.xml' : join(dir, 'users.xml');
  if (users !== '/etc/clickhouse-server/users.xml') {
    await writeFile(
      users,
      '<yandex><profiles><default/></profiles><users><default><password/><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users><quotas><default/></quotas></yandex>',
    );
  }
  const config = `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>${users}</users_config>
  <mark_cache_size>67108864</mark_cache_size>
  <max_concurrent_queries>200</max_concurrent_queries>
</yandex>
`;
  await writeFile(join(dir, 'config.xml'), config);
  const child = spawn(binary, [`--config-file=${join(dir, 'config.xml')}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = captureOutput(child);
  const url = `http://127.0.0.1:${httpPort}`;
  try {
    await waitFor(
      async () => {
        try {
          const response = await fetch(`${url}/ping`);
          return response.ok;
        } catch {
          return false;
        }
      },
      child,
      'clickhouse-server',
      30_000,
      log,
    );
  } catch (error) {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    async stop() {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startRedis(): Promise<PrivateService> {
  const binary = findBinary(['redis-server'], 'redis-server');
  const dir = await mkdtemp(join(tmpdir(), 'tandem-redis-'));
  const port = await freePort();
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = captureOutput(child);
  const ping = (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(1_000);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
  try {
    await waitFor(ping, child, 'redis-server', 15_000, log);
  } catch (error) {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
