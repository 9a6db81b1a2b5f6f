/**
 * "Try a filter" (issue 32): a subscriber pastes filters as a subscription writes them (JSON) and
 * sees which of the newest archived events it may receive they match, through
 * `POST /subscriptions/filters/test`. The gateway checks the filters as it checks a subscription's,
 * so an invalid one is shown with the place and, for `sql`, the position the gateway names.
 */
import type { components } from '../../client/koerier-client.js';
import { ApiError } from './api.js';
import { announce, h, table } from './dom.js';
import { t, when } from './i18n.js';
import type { PageContext } from './pages.js';

/** What the form starts with: a filter of the issue's own example. */
const EXAMPLE = '[\n  { "sql": "type LIKE \'nl.edu.%\' AND EXISTS subject" }\n]';
const DEFAULT_LAST = 50;
const MAX_LAST = 1000;

/** Trying a filter needs the scope of making a subscription, which the console's read-only users lack (EDU-2). */
const mayTry = (context: PageContext) => context.session.scopes.includes('subscriptions:manage');

export function filterTestPage(context: PageContext): Promise<void> {
  const { main } = context;
  if (!mayTry(context)) {
    main.replaceChildren(h('h1', {}, t('tryFilter')), h('p', { class: 'notice' }, t('tryFilterReadOnly')));
    return Promise.resolve();
  }
  const filters = h('textarea', { id: 'filters', name: 'filters', rows: '8', cols: '70', spellcheck: 'false' });
  filters.value = EXAMPLE;
  const last = h('input', {
    id: 'last',
    name: 'last',
    type: 'number',
    min: '1',
    max: String(MAX_LAST),
    value: String(DEFAULT_LAST),
    required: true,
  });
  const button = h('button', { type: 'submit', class: 'primary' }, t('tryIt'));
  const result = h('section', { 'aria-labelledby': 'result-heading' });
  const form = h(
    'form',
    { class: 'filter-test' },
    h('p', {}, t('tryFilterIntro')),
    h('label', { for: 'filters' }, t('filtersJson')),
    filters,
    h('label', { for: 'last' }, t('lastArchived')),
    last,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    void run(context, filters.value, Number(last.value), button, result);
  });
  main.replaceChildren(h('h1', {}, t('tryFilter')), form, result);
  return Promise.resolve();
}

async function run(
  { api }: PageContext,
  text: string,
  last: number,
  button: HTMLButtonElement,
  result: HTMLElement,
): Promise<void> {
  let filters: unknown;
  try {
    filters = JSON.parse(text);
  } catch {
    return refused(result, t('filtersNotJson'), []);
  }
  button.disabled = true;
  try {
    // Checked by the gateway, as a subscription's filters are.
    const list = (Array.isArray(filters) ? filters : [filters]) as components['schemas']['Filter'][];
    const { data } = await api.POST('/subscriptions/filters/test', {
      body: { filters: list, archived: { last } },
    });
    if (data) shown(result, data);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const issues = error.errors.map((issue) => `${issue.attribute ?? ''}: ${issue.message}`);
    refused(result, error.detail ?? error.title, issues);
  } finally {
    button.disabled = false;
  }
}

function shown(result: HTMLElement, answer: components['schemas']['FilterTestResult']): void {
  const summary = `${answer.matched} ${t('of')} ${answer.tested} ${t('eventsMatch')}`;
  result.replaceChildren(
    h('h2', { id: 'result-heading' }, t('result')),
    h('p', {}, summary),
    answer.archive && !answer.archive.complete ? h('p', { class: 'notice' }, t('archiveIncomplete')) : '',
    answer.events.length === 0
      ? h('p', {}, t('noArchivedEvents'))
      : table(
          t('archivedEvents'),
          [t('at'), t('type'), t('id'), t('source'), t('matches'), t('sqlErrors')],
          answer.events.map((event) => [
            when(event.acceptedAt),
            event.type,
            event.id,
            event.source,
            h('span', { class: event.matches ? 'outcome-delivered' : '' }, event.matches ? t('yes') : t('no')),
            (event.sqlErrors ?? []).map((error) => `${error.filter}: ${error.error}`).join('; '),
          ]),
        ),
  );
  announce(summary);
}

function refused(result: HTMLElement, message: string, issues: readonly string[]): void {
  result.replaceChildren(
    h('h2', { id: 'result-heading' }, t('result')),
    h('p', { class: 'notice error', role: 'alert' }, message),
    issues.length === 0 ? '' : h('ul', {}, ...issues.map((issue) => h('li', {}, h('code', {}, issue)))),
  );
}
