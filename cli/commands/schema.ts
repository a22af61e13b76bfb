/** `tandem schema`: the config's JSON Schema for editors, or the Markdown reference. */
import { configJsonSchema, configReferenceMarkdown } from '../../core/index.js';
import { ExitCode } from '../exit-codes.js';
import type { CliContext } from '../cli-context.js';

export interface SchemaOptions {
  /** Print the Markdown config reference (docs/config.md) instead of JSON Schema. */
  readonly markdown?: boolean;
}

export async function run(options: SchemaOptions, ctx: CliContext): Promise<number> {
  ctx.out(options.markdown ? configReferenceMarkdown() : JSON.stringify(configJsonSchema(), null, 2));
  return ExitCode.ok;
}
