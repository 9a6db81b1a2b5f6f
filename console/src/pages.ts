/** The console's pages: what a subscriber (or, with `admin`, an operator) sees and may do. */
import { ApiError, type Api } from './api.js';
import type { Session } from './auth.js';
import { announce, facts, h, table } from './dom.js';
import { t, when } from './i18n.js';

type Json = Record<string, unknown>;

export interface PageContext {
  readonly api: Api;
  readonly session: Session;
  readonly main: HTMLElement;
  /** Draws the current page again, e.g. after an action. */
  readonly refresh: () => Promise<void>;
}

const isOperator = (session: Session) => session.scopes.includes('admin');
/**
 * Resuming and redriving change state, which only a confidential client may (EDU-2): a user of the
 * stack's user pool holds read scopes only and is told to use the partner's client instead.
 */
const mayManage = (session: Session) => session.scopes.includes('subscriptions:manage');
const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));

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
            text(s['delivery'] ?? 'push'),
            ((s['types'] as string[] | undefined) ?? []).join(', '),
            h('span', { class: `state-${text(s['status'])}` }, text(s['status'])),
            text(s['statusreason']),
          ]),
        ),
  );
}

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
  const status = text(subscription['status']);

  const actions = h('div', { class: 'actions' });
  if (!mayManage(session)) actions.append(h('p', { class: 'notice' }, t('readOnly')));
  else if (status === 'suspended') {
    const resume = h('button', { type: 'button', class: 'primary' }, t('resume'));
    resume.addEventListener(
      'click',
      () => void act(context, resume, () => api.POST('/subscriptions/{id}/resume', { params }), t('resumed')),
    );
    actions.append(resume);
  }
  const redrive = h(
    'button',
    { type: 'button', class: 'primary', disabled: deadLetters.length === 0 },
    t('redriveAll'),
  );
  redrive.addEventListener(
    'click',
    () =>
      void act(
        context,
        redrive,
        () => api.POST('/subscriptions/{id}/dead-letters/redrive', { params, body: { all: true } }),
        t('redriven'),
      ),
  );

  main.replaceChildren(
    h('h1', {}, `${t('subscription')} ${id}`),
    backLink(),
    facts([
      [t('owner'), text(subscription['owner'])],
      [t('delivery'), text(subscription['delivery'] ?? 'push')],
      [t('sink'), text(subscription['sink'])],
      [t('types'), ((subscription['types'] as string[] | undefined) ?? []).join(', ')],
      [t('state'), h('span', { class: `state-${status}` }, status)],
      [t('reason'), text(subscription['statusreason'])],
    ]),
    actions,
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
      [t('breaker'), text(health['breaker'])],
      [t('failureStreak'), text(health['failurestreak'])],
      [t('nextAttempt'), when(text(health['nextattemptat']))],
    ]),
    attempts.length === 0
      ? h('p', {}, `${t('attempts')}: ${t('none')}`)
      : table(
          t('attempts'),
          [t('at'), t('attempt'), t('outcome'), t('status'), t('latency'), t('answer'), t('events')],
          attempts
            .slice(0, 20)
            .map((a) => [
              when(text(a['at'])),
              text(a['attempt']),
              h('span', { class: `outcome-${text(a['outcome'])}` }, text(a['outcome'])),
              text(a['status']),
              a['latencyMs'] === undefined ? '' : `${text(a['latencyMs'])} ms`,
              answerCell(a['answer'] as Json | undefined),
              eventsLabel(a['events']),
            ]),
        ),
    h('h2', {}, t('deadLetters')),
    deadLetters.length === 0
      ? h('p', {}, t('none'))
      : table(
          t('deadLetters'),
          [t('at'), t('reason'), t('attemptCount'), t('events')],
          deadLetters.map((d) => [
            when(text(d['deadLetteredAt'])),
            `${text(d['reason'])}: ${text(d['detail'])}`,
            text(d['attempts']),
            eventsLabel(d['events']),
          ]),
        ),
    ...(mayManage(session) ? [h('div', { class: 'actions' }, redrive)] : []),
    h('h2', {}, t('replays')),
    await replaysSection(api, id),
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
            text(c['status']),
            text((c['owner'] as Json | undefined)?.['name'] ?? c['owner']),
          ]),
        ),
  );
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
        text(r['state']),
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

/** What the receiver answered (issue 30 item 2): its content type and the start of its body, as text. */
function answerCell(answer: Json | undefined): Node | string {
  if (!answer) return '';
  const body = text(answer['body']);
  const shown = body.length > ANSWER_SHOWN_CHARACTERS ? `${body.slice(0, ANSWER_SHOWN_CHARACTERS)}…` : body;
  return h(
    'span',
    { class: 'answer' },
    answer['contentType'] ? h('span', { class: 'content-type' }, `${text(answer['contentType'])} `) : '',
    h('code', {}, shown || t('emptyBody')),
  );
}

/** The table shows this much of an answer; the API and `koerier deliveries --json` give all 2 KB. */
const ANSWER_SHOWN_CHARACTERS = 300;

function eventsLabel(events: unknown): string {
  if (!Array.isArray(events)) return '';
  return events
    .map((e) => (typeof e === 'string' ? (JSON.parse(e) as Json) : (e as Json)))
    .map((e) => `${text(e['type'])} ${text(e['id'])}`)
    .join('; ');
}

function backLink(): HTMLElement {
  return h('p', {}, h('a', { href: '#/' }, t('back')));
}

/** Runs an action from a button: disabled while it runs, the outcome announced, the page drawn again. */
async function act(
  context: PageContext,
  button: HTMLButtonElement,
  action: () => Promise<unknown>,
  done: string,
): Promise<void> {
  button.disabled = true;
  try {
    await action();
    announce(done);
    await context.refresh();
  } catch (error) {
    // A refusal says what was wrong in its detail; its status and title are for logs, not for the person.
    announce(
      error instanceof ApiError
        ? (error.detail ?? error.title)
        : error instanceof Error
          ? error.message
          : String(error),
    );
    button.disabled = false;
  }
}
