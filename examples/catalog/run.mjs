#!/usr/bin/env node
// Runs the catalog gRPC service's TypeScript through tsx, as bin/tandem.js does for the CLI.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
