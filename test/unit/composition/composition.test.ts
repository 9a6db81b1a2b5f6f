/**
 * Issue 15, item 4 and issue 29, item 1: a set of dependencies composed from some of the adapter
 * builders (functions/composition/composition.ts, adapters.ts). Real builders and real SDK clients
 * (made, never sent with: building an adapter does no I/O). Which members a handler's set has is
 * checked by the compiler (handler-lists.type-test.ts), not here.
 */
import { describe, expect, it } from 'vitest';
import { clientAdmission } from '../../../functions/app/client-throttling.js';
import { createLogger } from '../../../functions/app/logger.js';
import { partnerStore, partners, routeIndex, subscriptions } from '../../../functions/composition/adapters.js';
import { buildAwsDependencies } from '../../../functions/composition/aws-dependencies.js';
import {
  composeDependencies,
  createComposition,
  type ClientSource,
} from '../../../functions/composition/composition.js';
import { loadConfig, settingEnv } from '../../../functions/config.js';
import { resourceEnv } from '../../../functions/config/resources.js';

const config = loadConfig({
  [settingEnv.issuer]: 'https://issuer.test',
  [settingEnv.audience]: 'koerier',
  [settingEnv.jwksUrl]: 'https://issuer.test/jwks',
  AWS_REGION: 'eu-central-1',
  ...Object.fromEntries(
    (['partners', 'routes', 'subscriptions'] as const).map((table) => [resourceEnv.table(table), `koerier-${table}`]),
  ),
});

function composition() {
  const made: string[] = [];
  const prepared: unknown[] = [];
  const clients: ClientSource = (kind) => {
    made.push(kind.name);
    return kind.create();
  };
  const log = createLogger('error');
  const built = createComposition({
    config,
    log,
    admission: clientAdmission(config, log),
    clock: () => 1_000,
    options: {},
    clients,
    prepareClient: (client) => {
      prepared.push(client);
      return client;
    },
  });
  return { built, made, prepared };
}

describe('a composed set of dependencies', () => {
  it('issue 15: only the clients the listed adapters ask for are made, each once, and prepared (traced) once', () => {
    const { built, made, prepared } = composition();
    const deps = composeDependencies(built, { partners, partnerStore, subscriptions, routeIndex });
    expect(made).toEqual([]);
    expect(Object.keys(deps).sort()).toEqual(
      ['admission', 'clock', 'config', 'log', 'partnerStore', 'partners', 'routeIndex', 'subscriptions'].sort(),
    );
    void deps.partners;
    void deps.subscriptions;
    void deps.routeIndex;
    expect(made).toEqual(['dynamodb']);
    expect(prepared).toHaveLength(1);
  });

  it('issue 15: each member is built once per composition, for every set composed on it, and a builder another reuses is the same instance', () => {
    const { built } = composition();
    const ingest = composeDependencies(built, { partners, partnerStore });
    const router = composeDependencies(built, { partners, routeIndex, subscriptions });
    expect(ingest.partners).toBe(ingest.partners);
    expect(router.partners).toBe(ingest.partners);
    // The partner directory reads through the partnerStore member itself, not a second store.
    expect(routeIndex(built)).toBe(router.routeIndex);
    expect(partnerStore(built)).toBe(ingest.partnerStore);
    const other = composition().built;
    expect(composeDependencies(other, { partners, partnerStore }).partners).not.toBe(ingest.partners);
  });

  it("issue 15: the laptop host's set has every member, and builds none before it is read", () => {
    let asked = 0;
    const deps = buildAwsDependencies({
      config,
      clients: () => {
        asked++;
        return { dynamodb: {}, sqs: {}, s3: {} } as never;
      },
    });
    const members = Object.keys(deps);
    expect(members).toEqual(
      expect.arrayContaining([
        'claimCheckStore',
        'dataContracts',
        'eventArchive',
        'lockTokenKey',
        'signingKeys',
        'metrics',
        // Issue 30 item 1: the event trace's readers.
        'routedEventRecords',
        'eventDeliveries',
        // Issue 31 item 4: erasures.
        'erasureStore',
        'erasureQueue',
        'erasableStores',
        // Issue 30 item 3: out-of-band alerts.
        'alertQueue',
        'alertWindows',
        'alertMailer',
        'alertWebhook',
        // Issue 34: the ZGW adapter's kanalen and abonnementen.
        'zgwStore',
        // Issue 33: the lanes of ordered delivery per key.
        'orderedLanes',
        // Issue 33, ORD-1: the ingest's cached list of ordered subscriptions that refuse keyless events.
        'orderingKeyRequirements',
        // Issue 33: the lane sweeper's index.
        'laneSweepIndex',
      ]),
    );
    expect(members).toHaveLength(57);
    expect(asked).toBe(0);
  });

  it('issue 29 item 1: the clock a set is given is the one its members read: the delivery metrics are stamped with it', () => {
    const records: string[] = [];
    const deps = buildAwsDependencies({
      config,
      clock: () => Date.UTC(2030, 0, 1),
      writeMetricRecord: (record) => records.push(record),
    });
    expect(deps.clock()).toBe(Date.UTC(2030, 0, 1));
    deps.recordDeliveryMetrics({ attempts: 1, failures: 0, suspended: 0 });
    expect((JSON.parse(records[0]!) as { _aws: { Timestamp: number } })._aws.Timestamp).toBe(Date.UTC(2030, 0, 1));
  });
});
