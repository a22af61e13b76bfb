/**
 * The dashboard's script and stylesheet. The script is bundled with ECharts
 * from node_modules by esbuild (already Tandem's compiler) the first time a
 * server starts in this process: no CDN, nothing fetched at run time, and the
 * bundle always matches the installed packages.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build, stop } from 'esbuild';

export interface Asset {
  readonly body: Buffer;
  readonly type: string;
  /** Content hash: the URL names it, so browsers may cache it for good. */
  readonly hash: string;
}

export interface Assets {
  readonly script: Asset;
  readonly style: Asset;
}

/** The package folder (with dashboard/client/), from the sources or from a compiled build under .build/. */
function clientDir(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'dashboard', 'client');
    if (existsSync(join(candidate, 'main.ts')) && existsSync(join(dir, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`dashboard client sources not found above ${import.meta.dirname}`);
  }
}

const asset = (body: Buffer, type: string): Asset => ({ body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 16) });

let built: Promise<Assets> | undefined;

export function dashboardAssets(): Promise<Assets> {
  built ??= (async () => {
    const dir = clientDir();
    const result = await build({
      entryPoints: [join(dir, 'main.ts')],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      minify: true,
      write: false,
      legalComments: 'eof',
      logLevel: 'silent',
    }).finally(() => {
      // esbuild's service process would otherwise keep `tandem serve` alive after Ctrl-C or SIGTERM.
      void stop();
    });
    return {
      script: asset(Buffer.from(result.outputFiles[0]!.contents), 'text/javascript; charset=utf-8'),
      style: asset(await readFile(join(dir, 'dashboard.css')), 'text/css; charset=utf-8'),
    };
  })();
  return built;
}
