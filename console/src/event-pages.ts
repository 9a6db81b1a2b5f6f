/**
 * "Where is my event?" (issue 30 items 1 and 4): find an event by source and id, or search the
 * archive by type, source and time; and one event's trace — accepted when and under which
 * Idempotency-Key, later publications dropped as its duplicates, routed to how many subscriptions,
 * and per subscription the caller may see its delivery state and attempts with the receiver's
 * answers. The gateway decides what the caller sees (core/trace/event-trace.ts).
 */
import { ApiError } from './api.js';
import { refusalText, type PageContext } from './actions.js';
import { attemptsTable, deadLettersTable, text, traceHref } from './delivery-tables.js';
import { stateBadge, word } from './delivery-words.js';
import { facts, h, table } from './dom.js';
import { t, when } from './i18n.js';

type Json = Record<string, unknown>;

/** What the search form holds: the address's query after `#/events?`, so a search can be linked and reloaded. */
export interface EventQuery {
  readonly source?: string;
  readonly id?: string;
  readonly type?: string;
  readonly since?: string;
  readonly until?: string;
}

export async function eventSearchPage(context: PageContext, query: EventQuery): Promise<void> {
  const { main } = context;
  const field = (name: keyof EventQuery, label: string, type = 'text') =>
    h(
      'div',
      { class: 'field' },
      h('label', { for: `search-${name}` }, label),
      h('input', { id: `search-${name}`, name, type, value: query[name] ?? '', spellcheck: 'false' }),
    );
  const form = h(
    'form',
    { class: 'event-search', role: 'search', 'aria-label': t('searchEvents') },
    field('source', t('eventSource')),
    field('id', t('eventId')),
    field('type', t('eventType')),
    field('since', t('since'), 'datetime-local'),
    field('until', t('until'), 'datetime-local'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, t('search'))),
  );
  const result = h('section', { 'aria-labelledby': 'result-heading' });
  form.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    const asked: Record<string, string> = {};
    for (const name of ['source', 'id', 'type', 'since', 'until'] as const) {
      const value = String(data.get(name) ?? '').trim();
      if (value) asked[name] = value;
    }
    // One event: straight to its trace. Anything else: a search the address keeps.
    location.hash =
      asked['source'] && asked['id'] && !asked['type']
        ? traceHref(asked['source'], asked['id'])
        : `#/events?${new URLSearchParams(asked).toString()}`;
  });
  main.replaceChildren(h('h1', {}, t('searchEvents')), h('p', {}, t('searchIntro')), form, result);
  if (query.id && !query.source) return refused(result, t('needSourceAndId'));
  if (query.type || query.source || query.since || query.until) await search(context, query, result);
}

async function search(context: PageContext, query: EventQuery, result: HTMLElement): Promise<void> {
  const iso = (local: string | undefined) => (local ? new Date(local).toISOString() : undefined);
  let events: Json[];
  let complete: boolean;
  try {
    const { data } = await context.api.GET('/events', {
      params: {
        query: {
          ...(query.type ? { type: query.type } : {}),
          ...(query.source ? { source: query.source } : {}),
          ...(query.since ? { since: iso(query.since)! } : {}),
          ...(query.until ? { until: iso(query.until)! } : {}),
        },
      },
    });
    events = data?.events ?? [];
    complete = data?.complete ?? true;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return refused(result, refusalText(error));
  }
  result.replaceChildren(
    h('h2', { id: 'result-heading' }, t('result')),
    complete ? '' : h('p', { class: 'notice' }, t('archiveIncomplete')),
    events.length === 0
      ? h('p', {}, t('none'))
      : table(
          t('foundEvents'),
          [t('acceptedAt'), t('type'), t('source'), t('id')],
          events.map((e) => [
            when(text(e['acceptedAt'])),
            text(e['type']),
            text(e['source']),
            h('a', { href: traceHref(text(e['source']), text(e['id'])) }, text(e['id'])),
          ]),
        ),
  );
}

function refused(result: HTMLElement, message: string): void {
  result.replaceChildren(
    h('h2', { id: 'result-heading' }, t('result')),
    h('p', { class: 'notice error', role: 'alert' }, message),
  );
}

export async function eventTracePage(context: PageContext, source: string, id: string): Promise<void> {
  const { api, main } = context;
  const heading = h('h1', {}, t('trace'));
  const back = h('p', {}, h('a', { href: '#/events' }, t('searchEvents')));
  let trace: Json;
  try {
    trace = (await api.GET('/events/{source}/{id}', { params: { path: { source, id } } })).data ?? {};
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    main.replaceChildren(heading, back, h('p', { class: 'notice error' }, t('notFound')));
    return;
  }
  const accepted = trace['accepted'] as Json | undefined;
  const duplicates = trace['duplicates'] as Json | undefined;
  const routed = trace['routed'] as Json | undefined;
  const subscriptions = (trace['subscriptions'] as Json[] | undefined) ?? [];
  main.replaceChildren(
    heading,
    back,
    facts([
      [t('eventSource'), h('code', {}, source)],
      [t('eventId'), h('code', {}, id)],
      [t('traceState'), stateBadge('state', trace['state'])],
      [t('acceptedAt'), when(text(accepted?.['at']))],
      [t('publisher'), text(accepted?.['publisher'])],
      [t('idempotencyKey'), accepted?.['idempotencyKey'] ? h('code', {}, text(accepted['idempotencyKey'])) : ''],
      [t('correlationId'), text(accepted?.['correlationId'])],
      [t('duplicates'), duplicates ? duplicatesText(duplicates, accepted) : ''],
      [t('routedAt'), when(text(routed?.['at']))],
      [t('routedTo'), text(routed?.['subscriptionCount'])],
    ]),
    h('h2', {}, t('subscriptions')),
    ...(subscriptions.length === 0 ? [h('p', {}, t('noneVisible'))] : subscriptions.flatMap(tracedSubscription)),
  );
}

/** "2 × — duplicate of the acceptance at …": the trace names the first acceptance a duplicate was dropped for. */
function duplicatesText(duplicates: Json, accepted: Json | undefined): string {
  const latest = duplicates['latest'] as Json | undefined;
  const parts = [`${text(duplicates['count'])} ×`];
  if (latest?.['at']) parts.push(`${when(text(latest['at']))}`);
  if (accepted?.['at']) parts.push(`${t('duplicateOf')} ${when(text(accepted['at']))}`);
  return parts.join(' — ');
}

function tracedSubscription(subscription: Json): HTMLElement[] {
  const id = text(subscription['id']);
  const attempts = (subscription['attempts'] as Json[] | undefined) ?? [];
  const deadLetters = (subscription['deadLetters'] as Json[] | undefined) ?? [];
  const parts: (HTMLElement | '')[] = [
    h(
      'h3',
      {},
      h('a', { href: `#/subscriptions/${encodeURIComponent(id)}` }, `${t('subscription')} ${id}`),
      ` — ${word(subscription['delivery'])}`,
    ),
    facts([
      [t('deliveryState'), stateBadge('outcome', subscription['state'])],
      [t('attemptCount'), text(subscription['attemptCount'])],
      [t('reason'), subscription['historyTruncated'] ? t('historyTruncated') : ''],
    ]),
    // Newest first, as on the subscription's page.
    attempts.length === 0 ? '' : attemptsTable(`${t('attempts')}: ${id}`, [...attempts].reverse(), false),
    deadLetters.length === 0 ? '' : deadLettersTable(deadLetters),
  ];
  return parts.filter((part): part is HTMLElement => part !== '');
}
