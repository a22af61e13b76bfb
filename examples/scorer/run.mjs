#!/usr/bin/env node
// Runs the scorer's TypeScript through tsx, as bin/tandem.js does for the CLI (no runtime flags in the command).
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
