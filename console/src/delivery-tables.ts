/**
 * The tables of delivery attempts and dead letters, as the subscription page and an event's trace
 * show them: the outcome in the reader's language, what the receiver answered (issue 30 item 2),
 * and the events a delivery carried, each a link to its trace (issue 30 item 1).
 */
import { h, table } from './dom.js';
import { apiText, stateBadge, word } from './delivery-words.js';
import { t, when } from './i18n.js';

type Json = Record<string, unknown>;

export const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));

/** The table shows this much of an answer; the API and `koerier deliveries --json` give all 2 KB. */
const ANSWER_SHOWN_CHARACTERS = 300;

/** The address of one event's trace page. */
export function traceHref(source: string, id: string): string {
  return `#/events/${encodeURIComponent(source)}/${encodeURIComponent(id)}`;
}

export function attemptsTable(caption: string, attempts: readonly Json[], withEvents = true): HTMLTableElement {
  const headers = [t('at'), t('attempt'), t('outcome'), t('status'), t('latency'), t('answer')];
  return table(
    caption,
    withEvents ? [...headers, t('events')] : headers,
    attempts.map((a) => {
      const cells = [
        when(text(a['at'])),
        text(a['attempt']),
        h('span', {}, stateBadge('outcome', a['outcome']), failureNote(a['error'] as Json | undefined)),
        text(a['status']),
        a['latencyMs'] === undefined ? '' : `${text(a['latencyMs'])} ms`,
        answerCell(a['answer'] as Json | undefined),
      ];
      return withEvents ? [...cells, eventsCell(a['events'])] : cells;
    }),
  );
}

/** A dead letter's row: when, why (in the reader's words, the API's detail beside it), attempts, events, and an action. */
export function deadLettersTable(
  deadLetters: readonly Json[],
  action?: (deadLetter: Json) => HTMLElement,
): HTMLTableElement {
  // A trace's dead letters name neither their attempts nor their events (the trace is of one event).
  const full = deadLetters.some((d) => d['attempts'] !== undefined || d['events'] !== undefined);
  const headers = [t('at'), t('reason'), ...(full ? [t('attemptCount'), t('events')] : [])];
  return table(
    t('deadLetters'),
    action ? [...headers, t('actions')] : headers,
    deadLetters.map((d) => {
      const cells = [
        when(text(d['deadLetteredAt'])),
        h('span', {}, h('span', { 'data-value': text(d['reason']) }, word(d['reason'])), ': ', apiText(d['detail'])),
        ...(full ? [text(d['attempts']), eventsCell(d['events'])] : []),
      ];
      return action ? [...cells, action(d)] : cells;
    }),
  );
}

/** What the receiver answered: its content type and the start of its body, as text (never markup). */
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

function failureNote(error: Json | undefined): Node | string {
  if (!error) return '';
  return h('span', { class: 'failure', 'data-value': text(error['code']) }, ` (${word(error['code'])})`);
}

/**
 * The events of an attempt or a dead letter, each a link to its trace. Attempts name them as
 * objects; a dead letter keeps the events as accepted, JSON text each.
 */
export function eventsCell(events: unknown): Node | string {
  if (!Array.isArray(events)) return '';
  const named = events.map(eventName).filter((e): e is Json => e !== undefined);
  const list = h('ul', { class: 'events' });
  for (const e of named)
    list.append(
      h('li', {}, h('a', { href: traceHref(text(e['source']), text(e['id'])) }, `${text(e['type'])} ${text(e['id'])}`)),
    );
  return named.length === 0 ? '' : list;
}

function eventName(event: unknown): Json | undefined {
  if (typeof event !== 'string') return typeof event === 'object' && event !== null ? (event as Json) : undefined;
  try {
    return JSON.parse(event) as Json;
  } catch {
    return undefined;
  }
}
