/**
 * The ingest's data contracts (issue 14, item 3), apart from ./adapters.ts: functions/core/contracts/data-contracts.ts
 * runs code when its module loads (it wraps ajv-formats), so esbuild keeps it, and Ajv with it
 * (about 135 KB), in every bundle that imports its module, used or not. Only the ingest lists it.
 */
import { DataContracts } from '../core/contracts/data-contracts.js';
import { contractDocuments, contractStore } from './adapters.js';
import type { Builder } from './composition.js';

export const dataContracts: Builder<DataContracts> = (c) =>
  new DataContracts({
    store: contractStore(c),
    documents: contractDocuments(c),
    refreshMs: c.config.partnersRefreshSeconds * 1000,
    clock: c.clock,
    log: c.log,
  });
