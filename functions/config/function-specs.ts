/**
 * The functions of Koerier's resource description (./resources.ts): each one's entry, sizing,
 * routes, trigger and grants on the stores of ./resource-specs.ts. Plain data, read by the CDK app
 * and the laptop host.
 */
import type { FunctionSpec, RouteSpec } from './resource-specs.js';

/**
 * The subscription store is built with the route index (functions/composition/adapters.ts,
 * `subscriptions`), which reads the routes table's name when it is built, though only the store's
 * writes use it: a function that only reads subscriptions still needs the name, or its first read
 * of a subscription fails (test/infra/function-settings.test.ts). Read access is the least that
 * carries the name; once the store takes its route index lazily, these grants can go.
 */
const SUBSCRIPTION_STORE_ROUTES = { routes: 'read' } as const;

export const functions = {
  ingest: {
    entry: 'functions/handlers/ingest.ts',
    memoryMb: 512,
    timeoutSeconds: 15,
    routes: [
      { method: 'POST', path: '/events' },
      { method: 'OPTIONS', path: '/events' },
    ],
    // Partners: the publish grants (EDU-IN); readwrite because the first read after a deploy seeds the directory.
    // Contracts: the event type bindings and their message schemas, checked against `data` (issue 14 item 3).
    // Routes: which ordered subscriptions refuse events without their key (issue 33), one cached Query.
    tables: { idempotency: 'readwrite', partners: 'readwrite', contracts: 'read', routes: 'read' },
    queues: { inbound: 'send' },
    // Writes the claim check's objects (EDU-1); reads an uploaded object to check it before the 202.
    buckets: { payloads: 'readwrite', contracts: 'read' },
  },
  subscriptions: {
    entry: 'functions/handlers/subscriptions.ts',
    memoryMb: 512,
    // Room for the validation request to a slow target (KOERIER_VALIDATION_TIMEOUT_SECONDS, at most 20 s).
    timeoutSeconds: 30,
    // The validation handshake (WH-4) goes to the partner's target.
    outbound: true,
    routes: [
      { method: 'POST', path: '/subscriptions' },
      { method: 'GET', path: '/subscriptions' },
      { method: 'GET', path: '/subscriptions/{id}' },
      { method: 'PATCH', path: '/subscriptions/{id}' },
      { method: 'DELETE', path: '/subscriptions/{id}' },
      { method: 'GET', path: '/subscriptions/{id}/validation' },
      { method: 'POST', path: '/subscriptions/{id}/validation' },
      { method: 'POST', path: '/subscriptions/{id}/revalidate' },
      { method: 'POST', path: '/subscriptions/filters/test' },
    ],
    // Partners: the entitlements (EDU-7), seeded on the first read after a deploy.
    tables: { subscriptions: 'readwrite', routes: 'readwrite', idempotency: 'readwrite', partners: 'readwrite' },
    // A filter test reads the newest archived events (issue 32; docs/SUBSCRIPTIONS.md, "Trying a filter").
    buckets: { archive: 'list+read' },
    // Sealing only: the API never reads a credential back.
    keys: { credentials: 'encrypt' },
    // The validation handshake reaches targets that demand a client certificate.
    trust: ['client-certificate'],
    // A pull subscription's queues are made with it and deleted with it.
    pullQueues: ['manage'],
  },
  router: {
    entry: 'functions/handlers/router.ts',
    memoryMb: 512,
    timeoutSeconds: 10,
    queueTrigger: { queue: 'inbound', batchSize: 10, maxBatchingWindowSeconds: 1 },
    // Partners: the entitlements every match is checked against (EDU-7), seeded on the first read after a deploy.
    // deliveries: the lanes of ordered subscriptions (issue 33), in which the router stages their events.
    tables: { routes: 'read', idempotency: 'readwrite', partners: 'readwrite', deliveries: 'readwrite' },
    queues: { inbound: 'consume', deliveries: 'send' },
    pullQueues: ['send'],
    // Writes one archive object per batch (docs/REPLAY.md).
    buckets: { archive: 'readwrite' },
  },
  delivery: {
    entry: 'functions/handlers/delivery.ts',
    memoryMb: 512,
    // A batch's attempts run side by side: connect (5 s) + response (10 s) + a token fetch (5 s) + rate waits (2 s).
    timeoutSeconds: 30,
    queueTrigger: { queue: 'deliveries', batchSize: 10, maxBatchingWindowSeconds: 0 },
    // Deliveries and the sink credentials' token requests go to partners.
    outbound: true,
    // Subscriptions and routes: retiring (410) and suspending a subscription keep the route index in step.
    // Idempotency: the claim check's readers (the owners an event went to by reference).
    // Partners: the entitlements every attempt is checked against again (EDU-7, issue 28), seeded on the first read after a deploy.
    tables: {
      deliveries: 'readwrite',
      subscriptions: 'readwrite',
      routes: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
    },
    // Reads claim-check objects to put data inline again for subscriptions that take it (EDU-1).
    buckets: { payloads: 'read' },
    // Send: a multi-event delivery for a target without batches is split into single ones (JSON-3).
    // Inbound: Koerier's own operational events (suspended, retired, dead-lettered) take the ingest's path.
    // Alerts: suspensions, retirements and dead letters also go to the subscription's alert contacts (issue 30 item 3).
    queues: { deliveries: 'send+consume', inbound: 'send', alerts: 'send' },
    keys: { credentials: 'decrypt' },
    trust: ['sign', 'public-keys', 'client-certificate'],
  },
  // Out-of-band alerts (issue 30 item 3): rate-limited, one message per contact for a batch (core/alerts/send-alerts.ts).
  alerts: {
    entry: 'functions/handlers/alerts.ts',
    memoryMb: 256,
    timeoutSeconds: 30,
    // A batch is one digest per contact: 20 subscriptions suspended together make one message, not 20.
    queueTrigger: { queue: 'alerts', batchSize: 100, maxBatchingWindowSeconds: 30 },
    // Teams/Slack-style incoming webhooks are the subscriber's, on the internet.
    outbound: true,
    // Subscriptions: each one's contacts. Idempotency: the rate windows and dead-letter counters.
    tables: { subscriptions: 'read', ...SUBSCRIPTION_STORE_ROUTES, idempotency: 'readwrite' },
    queues: { alerts: 'consume' },
    // `ses:SendEmail` on the identity `koerier:alertSender` names, where it names one (lib/constructs/koerier-function.ts).
    email: true,
  },
  deliveryAdmin: {
    entry: 'functions/handlers/delivery-admin.ts',
    memoryMb: 256,
    timeoutSeconds: 30,
    routes: [
      { method: 'GET', path: '/subscriptions/{id}/deliveries' },
      { method: 'GET', path: '/subscriptions/{id}/health' },
      { method: 'GET', path: '/subscriptions/{id}/dead-letters' },
      { method: 'POST', path: '/subscriptions/{id}/dead-letters/redrive' },
      { method: 'POST', path: '/subscriptions/{id}/resume' },
      { method: 'POST', path: '/subscriptions/{id}/pause' },
      { method: 'POST', path: '/deliveries/dead-letter-queue/redrive' },
      // Issue 30 item 1: one event's trace, from the routed-event ledger (idempotency) and the deliveries.
      { method: 'GET', path: '/events/{source}/{id}' },
      // Issue 30 item 4: archived events by type, source and time, for their publisher and operators.
      { method: 'GET', path: '/events' },
    ],
    // Partners: a redrive withholds dead letters the owner is no longer entitled to (EDU-7).
    tables: {
      deliveries: 'readwrite',
      subscriptions: 'readwrite',
      routes: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
    },
    // Inbound: the operational event of a resume.
    queues: { deliveries: 'send', inbound: 'send' },
    deadLetterQueues: { deliveries: 'consume' },
    // A pull subscription's dead letters are redriven into its own queue.
    pullQueues: ['send'],
    // GET /events reads the newest archived events (issue 30 item 4).
    buckets: { archive: 'list+read' },
  },
  pull: {
    entry: 'functions/handlers/pull.ts',
    // Light work (at most a 6 MB answer); a long poll is mostly waiting, and duration is billed per GB-s (docs/PULL.md, idle cost).
    memoryMb: 256,
    // A 20 s long poll, the short polls that fill up and the settling after it, inside API Gateway's 30 s.
    timeoutSeconds: 28,
    routes: [
      { method: 'POST', path: '/subscriptions/{id}/events/receive' },
      { method: 'POST', path: '/subscriptions/{id}/events/acknowledge' },
      { method: 'POST', path: '/subscriptions/{id}/events/release' },
      { method: 'POST', path: '/subscriptions/{id}/events/renew-lock' },
      { method: 'POST', path: '/subscriptions/{id}/events/reject' },
    ],
    // Subscriptions: the caller's own pull subscription; deliveries: dead letters, reject marks, the wrapped lock token key.
    // Idempotency: the claim check's readers, as for the delivery function. Routes: see SUBSCRIPTION_STORE_ROUTES.
    // Partners: the entitlements every receive is checked against again (EDU-7, issue 28), seeded on the first read after a deploy.
    tables: {
      subscriptions: 'read',
      deliveries: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
      ...SUBSCRIPTION_STORE_ROUTES,
    },
    // Reads claim-check objects to put data inline again within a subscription's maxinlinebytes (EDU-1).
    buckets: { payloads: 'read' },
    keys: { lockTokens: 'encrypt+decrypt' },
    // Send: an ordered subscription's receive queues a lane's head, its acknowledgement the next event (issue 33).
    pullQueues: ['send', 'consume'],
  },
  // Replays (issue 13, item 2; docs/REPLAY.md): the API starts, reads and cancels; the worker does the work, a chunk per message.
  replays: {
    entry: 'functions/handlers/replays.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [
      { method: 'POST', path: '/subscriptions/{id}/replays' },
      { method: 'GET', path: '/subscriptions/{id}/replays' },
      { method: 'GET', path: '/subscriptions/{id}/replays/{replayId}' },
      { method: 'POST', path: '/subscriptions/{id}/replays/{replayId}/cancel' },
    ],
    // Deliveries: the replay records and each subscription's running-replay slot. Partners: the entitlements a replay stays within.
    tables: {
      subscriptions: 'read',
      deliveries: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
      ...SUBSCRIPTION_STORE_ROUTES,
    },
    queues: { replays: 'send' },
  },
  replayWorker: {
    entry: 'functions/handlers/replay-worker.ts',
    memoryMb: 512,
    // A chunk reads at most a few thousand archived events and queues at most 500.
    timeoutSeconds: 60,
    queueTrigger: { queue: 'replays', batchSize: 1, maxBatchingWindowSeconds: 0 },
    tables: { subscriptions: 'read', deliveries: 'readwrite', partners: 'readwrite', ...SUBSCRIPTION_STORE_ROUTES },
    buckets: { archive: 'list+read' },
    // Replayed events go the subscription's normal way: the deliveries queue, or a pull subscription's own.
    // Inbound: the operational event that tells the owner a replay finished.
    queues: { replays: 'send+consume', deliveries: 'send', inbound: 'send' },
    pullQueues: ['send'],
  },
  // Erasures (issue 31 item 4; docs/PRIVACY.md): the API starts and reads them (scope admin); the worker does the work, a chunk per message.
  erasures: {
    entry: 'functions/handlers/erasures.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [
      { method: 'POST', path: '/erasures' },
      { method: 'GET', path: '/erasures' },
      { method: 'GET', path: '/erasures/{id}' },
    ],
    // Deliveries: the audit records, and the wrapped secret the selector's keyed hash is made with (the lock tokens' key item).
    tables: { deliveries: 'readwrite', idempotency: 'readwrite' },
    queues: { erasures: 'send' },
    keys: { lockTokens: 'encrypt+decrypt' },
  },
  erasureWorker: {
    entry: 'functions/handlers/erasure-worker.ts',
    memoryMb: 512,
    // A chunk reads the archive for at most two minutes; the dead letters and pull queues come in the last one.
    timeoutSeconds: 300,
    queueTrigger: { queue: 'erasures', batchSize: 1, maxBatchingWindowSeconds: 0 },
    // Deliveries: the audit records and the dead letters. Idempotency: the payload ledger (where a dataref's object is; its record goes too).
    tables: { deliveries: 'readwrite', subscriptions: 'read', idempotency: 'readwrite', ...SUBSCRIPTION_STORE_ROUTES },
    buckets: { archive: 'list+readwrite', payloads: 'readwrite' },
    queues: { erasures: 'send+consume' },
    // Receives every visible message once, deletes the selection's, puts back the rest of a batch.
    pullQueues: ['send', 'consume'],
  },
  // Issue 33 (docs/ORDERING.md, "Sweeper"): finds ordered lanes whose settle or head message was lost and queues it again.
  laneSweeper: {
    entry: 'functions/handlers/lane-sweeper.ts',
    memoryMb: 256,
    // A run reads at most 500 index entries of each kind and looks at their lanes.
    timeoutSeconds: 120,
    schedule: { everyMinutes: 5 },
    // Deliveries: the lanes and their sweep index. Subscriptions: which queue a lane's messages go to.
    tables: { deliveries: 'readwrite', subscriptions: 'read', ...SUBSCRIPTION_STORE_ROUTES },
    queues: { deliveries: 'send' },
    pullQueues: ['send'],
  },
  signingKeys: {
    entry: 'functions/handlers/signing-keys.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [{ method: 'GET', path: '/.well-known/http-message-signatures-directory' }],
    trust: ['public-keys'],
  },
  payloads: {
    entry: 'functions/handlers/payloads.ts',
    memoryMb: 512,
    timeoutSeconds: 15,
    routes: [
      { method: 'GET', path: '/payloads/{id}' },
      { method: 'POST', path: '/payloads' },
    ],
    // The ledger of who may fetch, uploads granted and their bytes per client and hour (the upload quota), and the upload's idempotency key.
    // Partners: each client's own upload quota (issue 28 item 13), seeded on the first read after a deploy.
    tables: { idempotency: 'readwrite', partners: 'readwrite' },
    // Reads objects, presigns GETs for large ones and PUTs for uploads (a presigned URL carries the role's rights).
    buckets: { payloads: 'readwrite' },
  },
  // Partners at run time (issue 12, item 3): the admin API for clients, their publish grants and entitlements.
  partners: {
    entry: 'functions/handlers/partners.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [
      { method: 'GET', path: '/clients' },
      { method: 'GET', path: '/clients/{clientId}' },
      { method: 'PUT', path: '/clients/{clientId}' },
      { method: 'DELETE', path: '/clients/{clientId}' },
    ],
    tables: { partners: 'readwrite', idempotency: 'readwrite' },
    // Issue 34: sealing a partner's ZGW secret; the API never reads it back.
    keys: { credentials: 'encrypt' },
  },
  // The contract register (issue 14, EDU-6, EDU-21, EDU-22); the OpenAPI and AsyncAPI parsers are bundled into this function only.
  contracts: {
    entry: 'functions/handlers/contracts.ts',
    // The parsers (AsyncAPI's runs Spectral) want memory and CPU on the first document.
    memoryMb: 1024,
    timeoutSeconds: 20,
    routes: [
      { method: 'GET', path: '/contracts' },
      { method: 'GET', path: '/contracts/{name}' },
      { method: 'PATCH', path: '/contracts/{name}' },
      { method: 'GET', path: '/contracts/{name}/versions' },
      { method: 'GET', path: '/contracts/{name}/versions/{version}' },
      { method: 'PUT', path: '/contracts/{name}/versions/{version}' },
      { method: 'PATCH', path: '/contracts/{name}/versions/{version}' },
      { method: 'GET', path: '/contracts/{name}/versions/{version}/document' },
      { method: 'GET', path: '/contract-bindings' },
      { method: 'GET', path: '/contract-bindings/{type}' },
      { method: 'PUT', path: '/contract-bindings/{type}' },
      { method: 'DELETE', path: '/contract-bindings/{type}' },
    ],
    // Subscriptions: who consumes a contract (the subscriptions naming its event types).
    // Partners: the publish grants that say who may bind a type for its events (issue 28), seeded on the first read after a deploy.
    tables: {
      contracts: 'readwrite',
      idempotency: 'readwrite',
      subscriptions: 'read',
      partners: 'readwrite',
      ...SUBSCRIPTION_STORE_ROUTES,
    },
    buckets: { contracts: 'readwrite' },
    // Deprecating a contract tells its consumers through Koerier's own operational events, written to the inbound queue.
    queues: { inbound: 'send' },
  },
  // The ZGW Notificaties API (issue 34, docs/ZGW.md), served as Open Notificaties serves it, under its own base path.
  zgw: {
    entry: 'functions/handlers/zgw.ts',
    memoryMb: 512,
    // Room for the two callback checks of a new abonnement (each bounded by the validation timeout, at most 20 s).
    timeoutSeconds: 30,
    // An abonnement's callback is checked when it is made.
    outbound: true,
    routes: [
      { method: 'GET', path: '/zgw/api/v1/kanaal' },
      { method: 'POST', path: '/zgw/api/v1/kanaal' },
      { method: 'GET', path: '/zgw/api/v1/kanaal/{uuid}' },
      { method: 'PUT', path: '/zgw/api/v1/kanaal/{uuid}' },
      { method: 'PATCH', path: '/zgw/api/v1/kanaal/{uuid}' },
      { method: 'GET', path: '/zgw/api/v1/abonnement' },
      { method: 'POST', path: '/zgw/api/v1/abonnement' },
      { method: 'GET', path: '/zgw/api/v1/abonnement/{uuid}' },
      { method: 'PUT', path: '/zgw/api/v1/abonnement/{uuid}' },
      { method: 'PATCH', path: '/zgw/api/v1/abonnement/{uuid}' },
      { method: 'DELETE', path: '/zgw/api/v1/abonnement/{uuid}' },
      { method: 'POST', path: '/zgw/api/v1/notificaties' },
      { method: 'POST', path: '/zgw/api/v1/cloudevents' },
      { method: 'GET', path: '/zgw/api/v1/schema/openapi.json' },
    ],
    // A notificatie takes the ingest's path (idempotency, claim check, data contracts, the inbound queue).
    // An abonnement is delivered by the push subscription made, changed and deleted with it.
    tables: {
      zgw: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
      contracts: 'read',
      subscriptions: 'readwrite',
      routes: 'readwrite',
    },
    queues: { inbound: 'send' },
    buckets: { payloads: 'readwrite', contracts: 'read' },
    // Opens the partners' ZGW secrets; seals and opens an abonnement's `auth`.
    keys: { credentials: 'encrypt+decrypt' },
    // The callback checks reach consumers that demand a client certificate, as the validation handshake does.
    trust: ['client-certificate'],
  },
  apiDescription: {
    entry: 'functions/handlers/api-description.ts',
    memoryMb: 256,
    timeoutSeconds: 5,
    routes: [
      { method: 'GET', path: '/openapi.json' },
      // A page for each problem type (functions/core/http/problem-types.ts).
      { method: 'GET', path: '/problems/{type}' },
    ],
    defaultRoute: true,
  },
} as const satisfies Record<string, FunctionSpec>;

export type FunctionName = keyof typeof functions;

type RoutesOf<F> = F extends { readonly routes: readonly (infer R)[] } ? R : never;

/** API Gateway's route keys of one function, `METHOD /path`: what its app dispatches on, and its idempotency operations. */
export type RouteKey<F extends FunctionName> =
  RoutesOf<(typeof functions)[F]> extends infer R
    ? R extends RouteSpec
      ? `${R['method']} ${R['path']}`
      : never
    : never;
