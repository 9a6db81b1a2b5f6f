/** The console's list pages: the subscriptions a subscriber (or, with `admin`, an operator) sees, and the contracts. */
import { ApiError } from './api.js';
import { isOperator, type PageContext } from './actions.js';
import { text } from './delivery-tables.js';
import { apiText, stateBadge, word } from './delivery-words.js';
import { h, table } from './dom.js';
import { t } from './i18n.js';

export type { PageContext } from './actions.js';

type Json = Record<string, unknown>;

export async function subscriptionsPage({ api, session, main }: PageContext): Promise<void> {
  const query = isOperator(session) ? { owner: '*', limit: 100 } : { limit: 100 };
  const { data } = await api.GET('/subscriptions', { params: { query } });
  const subscriptions: Json[] = data?.subscriptions ?? [];
  const heading = isOperator(session) ? t('allSubscriptions') : t('yourSubscriptions');
  main.replaceChildren(
    h('h1', {}, t('subscriptions')),
    subscriptions.length === 0
      ? h('p', {}, t('none'))
      : table(
          heading,
          [t('id'), t('owner'), t('delivery'), t('types'), t('state'), t('reason')],
          subscriptions.map((s) => [
            h('a', { href: `#/subscriptions/${encodeURIComponent(text(s['id']))}` }, text(s['id'])),
            text(s['owner']),
            word(s['delivery'] ?? 'push'),
            ((s['types'] as string[] | undefined) ?? []).join(', '),
            stateBadge('state', s['status']),
            apiText(s['statusreason']),
          ]),
        ),
  );
}

export async function contractsPage({ api, main }: PageContext): Promise<void> {
  let contracts: Json[];
  try {
    contracts = (await api.GET('/contracts')).data?.contracts ?? [];
  } catch (error) {
    if (!(error instanceof ApiError) || (error.status !== 404 && error.status !== 405)) throw error;
    main.replaceChildren(h('h1', {}, t('contracts')), h('p', { class: 'notice' }, t('notYet')));
    return;
  }
  main.replaceChildren(
    h('h1', {}, t('contracts')),
    contracts.length === 0
      ? h('p', {}, t('none'))
      : table(
          t('contracts'),
          [t('name'), t('version'), t('kind'), t('state'), t('owner')],
          contracts.map((c) => [
            text(c['name']),
            text(c['latestversion'] ?? c['version']),
            text(c['kind']),
            word(c['status']),
            text((c['owner'] as Json | undefined)?.['name'] ?? c['owner']),
          ]),
        ),
  );
}
