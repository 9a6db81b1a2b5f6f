/**
 * The laptop host of the ordered delivery tests on the laptop (issue 33, test/e2e/ordered-*.test.ts):
 * the subscriber may agree validation (its HTTPS receivers take batches and need no handshake), the
 * publisher has no rate limit, the host trusts the tests' local certificate authority, and the
 * settling window is ORDERED_TEST_SETTLING_MS.
 */
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from './host.js';
import type { LocalCertificateAuthority } from './https-receiver.js';

/**
 * The window must cover the time from an event's 202 until the router has staged it: the inbound
 * queue's latency. On the laptop the router shares 2 cores with the publishers and, in CI, with the
 * rest of the suite: 3 s, not the 1 s default (1 s passed too on a machine loaded by three other
 * test runs; docs/ORDERING.md, "Acceptance order").
 */
export const ORDERED_TEST_SETTLING_MS = 3_000;

export function startOrderedTestHost(authority?: LocalCertificateAuthority): Promise<TestHost> {
  return startTestHost(
    {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishRatePerMinute]: '1000000',
      [settingEnv.orderingSettlingMs]: String(ORDERED_TEST_SETTLING_MS),
    },
    authority === undefined ? {} : { trustAuthority: authority },
  );
}
