/** `tandem store init`: create the store's directories or tables; safe to run again. */
import { createStore } from '../../store/index.js';
import { ExitCode } from '../exit-codes.js';
import { loadCommandConfig, type CliContext, type GlobalOptions } from '../cli-context.js';

export async function run(options: GlobalOptions, ctx: CliContext): Promise<number> {
  const { config } = await loadCommandConfig(options, ctx);
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  try {
    await store.init();
  } finally {
    await store.close();
  }
  if (options.json) ctx.out(JSON.stringify({ initialized: true, kind: store.kind, location: store.location }));
  else ctx.out(`initialized ${store.kind} store at ${store.location}`);
  return ExitCode.ok;
}
