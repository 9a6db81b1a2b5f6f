/**
 * Issue 29, item 1: a handler's builder list is checked by the compiler against what its app reads
 * (the app's `…AppDependencies` type) and what the edge reads (the metrics it flushes). tsc checks
 * this file with the rest (`npm run typecheck`); nothing runs it. Each `@ts-expect-error` fails the
 * typecheck once the line under it compiles, that is once a list that lacks a builder would be
 * accepted again; the lines without one show that the complete lists compile.
 */
import {
  claimCheckStore,
  deliveryQueue,
  eventArchive,
  idempotency,
  inboundQueue,
  metrics,
  outbox,
  partners,
  payloadLedger,
  publishRateWindow,
  pullQueues,
  routedEvents,
  routedEventRecords,
  orderingKeyRequirements,
  subscriptionMatcher,
  signingKeys,
  authenticate,
} from '../../../functions/composition/adapters.js';
import { buildAwsDependencies } from '../../../functions/composition/aws-dependencies.js';
import { dataContracts } from '../../../functions/composition/data-contracts-adapter.js';
import { lambdaDependencies } from '../../../functions/composition/lambda-dependencies.js';
import { handlerFor as ingestHandlerFor } from '../../../functions/handlers/ingest.js';
import { handlerFor as routerHandlerFor } from '../../../functions/handlers/router.js';
import { handlerFor as signingKeysHandlerFor } from '../../../functions/handlers/signing-keys.js';
import type { KoerierConfig } from '../../../functions/config.js';

export function routerLists(): void {
  const router = { subscriptionMatcher, routedEvents, partners, outbox, eventArchive, metrics };
  routerHandlerFor(lambdaDependencies(router));

  const { routedEvents: _ledger, ...withoutLedger } = router;
  // @ts-expect-error the router app reads routedEvents (the duplicate check's ledger)
  routerHandlerFor(lambdaDependencies(withoutLedger));

  const { metrics: _metrics, ...withoutMetrics } = router;
  // @ts-expect-error the queue edge flushes the metrics after each batch, whatever the app reads
  routerHandlerFor(lambdaDependencies(withoutMetrics));

  // Issue 29 item 3: the queues alone no longer do; the router enqueues through the composed outbox.
  const { outbox: _outbox, ...withoutOutbox } = router;
  // @ts-expect-error the router app reads the outbox, not the queues behind it
  routerHandlerFor(lambdaDependencies({ ...withoutOutbox, deliveryQueue, pullQueues }));
}

export function ingestLists(): void {
  const ingest = {
    authenticate,
    idempotency,
    publishRateWindow,
    partners,
    dataContracts,
    inboundQueue,
    claimCheckStore,
    payloadLedger,
    routedEventRecords,
    orderingKeyRequirements,
    metrics,
  };
  ingestHandlerFor(lambdaDependencies(ingest));

  const { dataContracts: _contracts, ...withoutContracts } = ingest;
  // @ts-expect-error the ingest app reads dataContracts
  ingestHandlerFor(lambdaDependencies(withoutContracts));
}

export function signingKeysLists(): void {
  signingKeysHandlerFor(lambdaDependencies({ signingKeys, metrics }));
  // @ts-expect-error the signing-keys app reads signingKeys
  signingKeysHandlerFor(lambdaDependencies({ metrics }));
  // @ts-expect-error a builder of no member is no builder
  signingKeysHandlerFor(lambdaDependencies({ signingKeys, metrics, signingKey: signingKeys }));
}

/** The laptop host composes every builder: its set serves every handler. */
export function laptopHostSet(config: KoerierConfig): void {
  const everything = () => buildAwsDependencies({ config });
  routerHandlerFor(everything);
  ingestHandlerFor(everything);
  signingKeysHandlerFor(everything);
}
