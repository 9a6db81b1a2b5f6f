/**
 * One subscription (issue 16; issue 30 item 4): what it is, what a subscriber may do with it
 * (edit, pause, resume, validate again, redrive one dead letter or all), how its deliveries went
 * (health, the 7-day charts, the recent attempts with the receiver's answers) and its dead letters
 * and replays.
 */
import { ApiError, type Api } from './api.js';
import { actionButton, mayManage, type PageContext } from './actions.js';
import { deliveryCharts } from './delivery-charts.js';
import { attemptsTable, deadLettersTable, text } from './delivery-tables.js';
import { apiText, stateBadge, word } from './delivery-words.js';
import { facts, h, table } from './dom.js';
import { t, when } from './i18n.js';

type Json = Record<string, unknown>;

/** The newest attempts the table shows; the charts read the whole week. */
const ATTEMPTS_SHOWN = 20;

export async function subscriptionPage(context: PageContext, id: string): Promise<void> {
  const { api, session, main } = context;
  const params = { path: { id } };
  let subscription: Json;
  try {
    subscription = (await api.GET('/subscriptions/{id}', { params })).data ?? {};
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      main.replaceChildren(
        h('h1', {}, t('subscriptions')),
        h('p', { class: 'notice error' }, t('notFound')),
        backLink(),
      );
      return;
    }
    throw error;
  }
  const page = { params: { path: { id }, query: { limit: 100 } } };
  const [deliveries, dead, health] = await Promise.all([
    api.GET('/subscriptions/{id}/deliveries', page),
    api.GET('/subscriptions/{id}/dead-letters', page),
    // A gateway without the health route still shows the rest.
    api.GET('/subscriptions/{id}/health', { params }).then(
      ({ data }): Json => data ?? {},
      (): Json => ({}),
    ),
  ]);
  const attempts: Json[] = deliveries.data?.attempts ?? [];
  const deadLetters: Json[] = dead.data?.deadLetters ?? [];
  const delivered = attempts.filter((a) => a['outcome'] === 'delivered');
  const latencies = attempts
    .map((a) => Number(a['latencyMs']))
    .filter((n) => Number.isFinite(n) && n > 0)
    .sort((a, b) => a - b);
  const manage = mayManage(session);
  const redriveOne = (deadLetter: Json) =>
    actionButton(
      context,
      t('redriveOne'),
      () =>
        api.POST('/subscriptions/{id}/dead-letters/redrive', {
          params,
          body: { deliveryIds: [text(deadLetter['deliveryId'])] },
        }),
      t('redriven'),
      { 'aria-label': `${t('redriveOne')}: ${when(text(deadLetter['deadLetteredAt']))}` },
    );

  main.replaceChildren(
    h('h1', {}, `${t('subscription')} ${id}`),
    backLink(),
    facts([
      [t('owner'), text(subscription['owner'])],
      [t('delivery'), word(subscription['delivery'] ?? 'push')],
      [t('sink'), text(subscription['sink'])],
      [t('types'), ((subscription['types'] as string[] | undefined) ?? []).join(', ')],
      [t('state'), stateBadge('state', subscription['status'])],
      [t('reason'), subscription['suspendedfor'] ? word(subscription['suspendedfor']) : ''],
      [t('reason'), apiText(subscription['statusreason'])],
    ]),
    manage
      ? h('div', { class: 'actions', role: 'group', 'aria-label': t('actions') }, ...actions(context, id, subscription))
      : h('p', { class: 'notice' }, t('readOnly')),
    h('h2', {}, t('health')),
    facts([
      [
        t('successRate'),
        attempts.length === 0
          ? ''
          : `${Math.round((100 * delivered.length) / attempts.length)} % (${delivered.length}/${attempts.length})`,
      ],
      [t('medianLatency'), latencies.length === 0 ? '' : `${latencies[Math.floor(latencies.length / 2)]} ms`],
      [t('lastSuccess'), when(text(health['lastsuccess'] ?? delivered[0]?.['at']))],
      [t('breaker'), word(health['breaker'])],
      [t('failureStreak'), text(health['failurestreak'])],
      [t('nextAttempt'), when(text(health['nextattemptat']))],
    ]),
    await deliveryCharts(api, id),
    h('h2', {}, t('attempts')),
    attempts.length === 0 ? h('p', {}, t('none')) : attemptsTable(t('attempts'), attempts.slice(0, ATTEMPTS_SHOWN)),
    h('h2', {}, t('deadLetters')),
    deadLetters.length === 0 ? h('p', {}, t('none')) : deadLettersTable(deadLetters, manage ? redriveOne : undefined),
    ...(manage && deadLetters.length > 0
      ? [
          h(
            'div',
            { class: 'actions' },
            actionButton(
              context,
              t('redriveAll'),
              () => api.POST('/subscriptions/{id}/dead-letters/redrive', { params, body: { all: true } }),
              t('redriven'),
              { class: 'primary' },
            ),
          ),
        ]
      : []),
    h('h2', {}, t('replays')),
    await replaysSection(api, id),
  );
}

/** The buttons the subscription's state allows: a push subscription is paused, resumed and validated again. */
function actions(context: PageContext, id: string, subscription: Json): HTMLElement[] {
  const { api } = context;
  const params = { path: { id } };
  const status = text(subscription['status']);
  const push = (subscription['delivery'] ?? 'push') === 'push';
  const buttons: HTMLElement[] = [
    h('a', { href: `#/subscriptions/${encodeURIComponent(id)}/edit`, class: 'button' }, t('edit')),
  ];
  if (status === 'suspended')
    buttons.push(
      actionButton(context, t('resume'), () => api.POST('/subscriptions/{id}/resume', { params }), t('resumed'), {
        class: 'primary',
      }),
    );
  if (push && status === 'active')
    buttons.push(
      actionButton(context, t('pause'), () => api.POST('/subscriptions/{id}/pause', { params }), t('paused')),
    );
  if (push && (status === 'pending' || status === 'rejected'))
    buttons.push(
      actionButton(
        context,
        t('revalidate'),
        () => api.POST('/subscriptions/{id}/revalidate', { params }),
        t('revalidated'),
      ),
    );
  return buttons;
}

async function replaysSection(api: Api, id: string): Promise<HTMLElement> {
  try {
    const replays: Json[] =
      (await api.GET('/subscriptions/{id}/replays', { params: { path: { id } } })).data?.replays ?? [];
    if (replays.length === 0) return h('p', {}, t('none'));
    return table(
      t('replays'),
      [t('window'), t('state'), t('scanned'), t('matched'), t('sent'), t('failed')],
      replays.map((r) => [
        `${when(text(r['from']))} – ${when(text(r['to']))}`,
        word(r['state']),
        text(r['scanned']),
        text(r['matched']),
        text(r['sent']),
        text(r['failed']),
      ]),
    );
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.status === 405))
      return h('p', { class: 'notice' }, t('notYet'));
    throw error;
  }
}

export function backLink(): HTMLElement {
  return h('p', {}, h('a', { href: '#/' }, t('back')));
}
