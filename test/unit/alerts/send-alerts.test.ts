/**
 * Out-of-band alerts (issue 30 item 3, SELF-3): which notices raise alerts, the rate limit per
 * (contact, subscription, kind), the digest per contact, the dead-letter threshold, and that a
 * failed send loses nothing and tells nobody twice.
 */
import { describe, expect, it } from 'vitest';
import type { AlertContacts } from '../../../functions/core/subscriptions/alert-contacts.js';
import { alertSignalsOf, type AlertSignal } from '../../../functions/core/alerts/alert-signals.js';
import {
  ALERT_WINDOW_MS,
  sendAlerts,
  type AlertSendingDependencies,
} from '../../../functions/core/alerts/send-alerts.js';
import type { AlertMessage } from '../../../functions/core/alerts/alert-digest.js';
import {
  DeadLetterTelling,
  deadLetterNotices,
  retiredNotice,
  suspendedNotice,
} from '../../../functions/core/delivery/operational-notices.js';
import { alertingOperations } from '../../../functions/core/alerts/alert-signals.js';
import type { OperationalNotice } from '../../../functions/core/operations/operational-events.js';
import type { DeadLetter } from '../../../functions/core/delivery/delivery-records.js';
import { MemoryAlertMailer, MemoryAlertWindows } from '../../support/memory/alerts-memory-adapters.js';

const T0 = Date.parse('2026-11-29T14:00:00Z');
const CONTACTS: AlertContacts = {
  emails: ['beheer@ontvanger.example'],
  webhookUrl: 'https://hooks.chat.example/koerier',
  deadLetterThreshold: 3,
};
const noLog = { info() {}, warn() {}, error() {} };

function setUp(contacts: AlertContacts = CONTACTS) {
  const mailer = new MemoryAlertMailer();
  const windows = new MemoryAlertWindows();
  const posted: { url: string; message: AlertMessage }[] = [];
  let now = T0;
  let webhookFails = false;
  const deps: AlertSendingDependencies = {
    subscriptions: {
      get: async (id) =>
        id.startsWith('gone') ? undefined : { id, sink: 'https://ontvanger.example/hook', alerts: contacts },
    },
    windows,
    mailer,
    webhook: async (url, message) => {
      if (webhookFails) throw new Error('the alert webhook answered 500');
      posted.push({ url, message });
    },
    clock: () => now,
    log: noLog,
    apiBaseUrl: 'https://koerier.example/v1',
    deployment: 'Koerier',
  };
  return {
    deps,
    mailer,
    windows,
    posted,
    advance: (ms: number) => (now += ms),
    failWebhook: (fails: boolean) => (webhookFails = fails),
  };
}

function suspended(subscriptionId: string, since = T0): AlertSignal {
  const [signal] = alertSignalsOf([
    suspendedNotice(
      { id: subscriptionId, owner: 'dev-subscriber' },
      'the target answered 500',
      'target-failing',
      since,
      T0,
    ),
  ]);
  return signal!;
}

function deadLettered(subscriptionId: string, deliveryId: string): AlertSignal {
  const notices = deadLetterNotices(
    { id: subscriptionId, owner: 'dev-subscriber' },
    {
      subscriptionId,
      deliveryId,
      events: [],
      createdAt: T0,
      deadLetteredAt: new Date(T0).toISOString(),
      reason: 'exhausted',
      detail: 'the retry window passed',
      attempts: 5,
      lastAttempts: [],
    },
    false,
    T0,
  );
  return alertSignalsOf(notices)[0]!;
}

describe('alert signals (issue 30 item 3)', () => {
  it('SELF-3, issue 30 item 3: suspension, 410 Gone, a 401 dead letter and a missing credential raise the four kinds; a resume raises none', () => {
    const owner = { id: 's1', owner: 'dev-subscriber' };
    const kinds = alertSignalsOf([
      suspendedNotice(owner, 'failing', 'target-failing', T0, T0),
      suspendedNotice(owner, 'no credential', 'credential-required', T0, T0),
      retiredNotice(owner, 'the target answered 410 Gone', T0),
      ...deadLetterNotices(
        owner,
        {
          subscriptionId: 's1',
          deliveryId: 'd1',
          events: [],
          createdAt: T0,
          deadLetteredAt: '',
          reason: 'rejected',
          detail: 'the target answered 401',
          attempts: 1,
          lastAttempts: [],
        },
        true,
        T0,
      ),
    ]).map((signal) => signal.kind);
    expect(kinds).toEqual(['suspended', 'credentials-failing', 'consent-lost', 'credentials-failing']);
    // The same occurrence told twice is the same signal.
    expect(suspended('s1').id).toBe(suspended('s1').id);
    expect(suspended('s1').id).not.toBe(suspended('s2').id);
  });
});

describe('entitlement lost (issue 30 item 3)', () => {
  it('SELF-3, issue 30 item 3: a delivery withheld for a lost entitlement is no operational event, but raises an entitlement-lost alert', async () => {
    const published: OperationalNotice[] = [];
    const raised: AlertSignal[] = [];
    const operations = alertingOperations(
      { publish: async (notices) => void published.push(...notices) },
      { raise: async (signals) => void raised.push(...signals) },
      noLog,
    );
    const stored: DeadLetter[] = [];
    const telling = new DeadLetterTelling(
      'sub-1',
      {
        operations,
        deadLetters: {
          putDeadLetter: async (deadLetter: DeadLetter) => void stored.push(deadLetter),
          listDeadLetters: async () => ({ items: [] }),
        } as never,
        log: noLog,
      },
      () => T0,
    );
    const withheld: DeadLetter = {
      subscriptionId: 'sub-1',
      deliveryId: 'd1',
      events: [],
      createdAt: T0,
      deadLetteredAt: new Date(T0).toISOString(),
      reason: 'not-entitled',
      detail: 'the owner may no longer receive nl.example.x.v1',
      attempts: 0,
      lastAttempts: [],
    };
    await telling.put(withheld, { id: 'sub-1', owner: 'dev-subscriber' }, async () => void stored.push(withheld));
    expect(stored).toHaveLength(1);
    expect(published).toEqual([]);
    expect(raised.map((signal) => [signal.kind, signal.subscriptionId])).toEqual([['entitlement-lost', 'sub-1']]);
  });
});

describe('sending alerts (issue 30 item 3)', () => {
  it('SELF-3, issue 30 item 3: twenty subscriptions suspended at once make one digest per contact, listing all twenty', async () => {
    const { deps, mailer, posted } = setUp();
    const ids = Array.from({ length: 20 }, (_, i) => `sub-${String(i).padStart(2, '0')}`);
    const result = await sendAlerts(
      ids.map((id) => suspended(id)),
      deps,
    );
    expect(result.failedSignalIds).toEqual([]);
    expect(mailer.sent).toHaveLength(1);
    expect(posted).toHaveLength(1);
    const [mail] = mailer.sent;
    expect(mail!.to).toBe('beheer@ontvanger.example');
    expect(mail!.subject).toBe('[Koerier] 20 alerts for your subscriptions (20 suspended)');
    for (const id of ids) expect(mail!.text).toContain(`Subscription ${id}: suspended`);
    expect(posted[0]!.url).toBe('https://hooks.chat.example/koerier');
    expect(posted[0]!.message.text).toBe(mail!.text);
  });

  it('SELF-3, issue 30 item 3: one alert is one message with the next step and a link, not a digest', async () => {
    const { deps, mailer } = setUp();
    await sendAlerts([suspended('sub-1')], deps);
    expect(mailer.sent[0]!.subject).toBe('[Koerier] Subscription sub-1 suspended');
    expect(mailer.sent[0]!.text).toContain('POST /subscriptions/sub-1/resume');
    expect(mailer.sent[0]!.text).toContain('https://koerier.example/v1/subscriptions/sub-1');
  });

  it('SELF-3, issue 30 item 3: the same kind for the same subscription and contact goes at most once an hour; another kind or subscription still goes', async () => {
    const { deps, mailer, advance } = setUp();
    await sendAlerts([suspended('sub-1', T0)], deps);
    advance(60_000);
    // A later suspension of the same subscription (another occurrence) within the hour: held back.
    await sendAlerts([suspended('sub-1', T0 + 60_000)], deps);
    expect(mailer.sent).toHaveLength(1);
    const [consentLost] = alertSignalsOf([retiredNotice({ id: 'sub-1', owner: 'o' }, 'gone', T0)]);
    await sendAlerts([consentLost!, suspended('sub-2')], deps);
    expect(mailer.sent).toHaveLength(2);
    expect(mailer.sent[1]!.subject).toBe('[Koerier] 2 alerts for your subscriptions (1 consent-lost, 1 suspended)');
    advance(ALERT_WINDOW_MS);
    await sendAlerts([suspended('sub-1', T0 + ALERT_WINDOW_MS)], deps);
    expect(mailer.sent).toHaveLength(3);
  });

  it('SELF-3, issue 30 item 3: dead letters alert only once the hour reaches the subscription threshold', async () => {
    const { deps, mailer } = setUp();
    await sendAlerts([deadLettered('sub-1', 'd1'), deadLettered('sub-1', 'd2')], deps);
    expect(mailer.sent).toHaveLength(0);
    await sendAlerts([deadLettered('sub-1', 'd3')], deps);
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]!.text).toContain('dead-lettering above its threshold');
    expect(mailer.sent[0]!.text).toContain('3 dead letters since 2026-11-29T14:00:00.000Z (threshold 3)');
    // More dead letters within the hour: no second alert.
    await sendAlerts([deadLettered('sub-1', 'd4')], deps);
    expect(mailer.sent).toHaveLength(1);
  });

  it('SELF-3, issue 30 item 3: a contact that could not be told makes its signals come back; the retry tells it, and not the contact already told', async () => {
    const { deps, mailer, posted, failWebhook } = setUp();
    const signals = [suspended('sub-1'), suspended('sub-2')];
    failWebhook(true);
    const first = await sendAlerts(signals, deps);
    expect(new Set(first.failedSignalIds)).toEqual(new Set(signals.map((signal) => signal.id)));
    expect(mailer.sent).toHaveLength(1);
    failWebhook(false);
    const retry = await sendAlerts(signals, deps);
    expect(retry.failedSignalIds).toEqual([]);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.message.subject).toBe('[Koerier] 2 alerts for your subscriptions (2 suspended)');
    expect(mailer.sent).toHaveLength(1);
  });

  it('SELF-3, issue 30 item 3: a subscription without contacts, or deleted, raises nothing', async () => {
    const { deps, mailer } = setUp({ emails: [], deadLetterThreshold: 10 });
    await sendAlerts([suspended('sub-1'), suspended('gone-1')], deps);
    expect(mailer.sent).toEqual([]);
  });
});
