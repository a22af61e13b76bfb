/**
 * A private nginx (Debian's, installed by .ci/ensure-packages.sh) around an `http { }` part such as
 * `tandem collect --print-nginx-config` prints: one process (`master_process off`), everything under a temp dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';

export const NGINX = '/usr/sbin/nginx';

export interface RunningNginx {
  readonly process: ChildProcess;
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

export interface NginxOptions {
  /** More of the `http { }` block, before the part (a `log_format`, say). */
  readonly extraHttp?: string;
  /** How the command is started: benches pin it to a core (bench/support/processes.ts `pinned`). */
  readonly launch?: (command: string, args: readonly string[]) => [string, string[]];
}

/** Resolves once nginx accepts connections on `port`; fails if it exits first (its error log in the message). */
export async function startNginx(dir: string, httpPart: string, port: number, options: NginxOptions = {}): Promise<RunningNginx> {
  await mkdir(join(dir, 'temp'), { recursive: true });
  await writeFile(join(dir, 'tandem.conf'), httpPart);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `    ${name}_temp_path ${join(dir, 'temp', name)};`).join('\n');
  await writeFile(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'master_process off;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 4096; }',
      'http {',
      '    access_log off;',
      temp,
      options.extraHttp ?? '',
      `    include ${join(dir, 'tandem.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')];
  const [command, argv] = options.launch ? options.launch(NGINX, args) : [NGINX, args];
  const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const errorLog = (): Promise<string> => readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
  const deadline = Date.now() + 10_000;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`nginx exited before it listened: ${stderr}${await errorLog()}`);
    if (await accepts(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen on ${port} within 10 s: ${stderr}${await errorLog()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    process: child,
    errorLog,
    async stop() {
      if (!gone) child.kill('SIGTERM');
      await exited;
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
