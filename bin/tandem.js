#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `npx tandem` works straight after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv);
