#!/usr/bin/env node
// The `koerier` command (package.json "bin"): runs cli/main.ts through tsx, as `npm start` runs the
// laptop host, so a clone needs no build step after `npm install`.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
