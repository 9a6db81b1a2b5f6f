/**
 * The API's fixed vocabularies (attempt outcomes, delivery and subscription states, dead-letter
 * reasons and failure codes) in the reader's language (issue 30 item 4: no English outcome words
 * in the Dutch view). The API's own word stays in the element's `data-value`, for tests and for
 * a reader who compares the page with `koerier deliveries`; a word the console does not know yet
 * is shown as the API gives it.
 */
import { h } from './dom.js';
import { language } from './i18n.js';

const words: Readonly<Record<string, readonly [string, string]>> = {
  // Attempt outcomes and an event's delivery state per subscription (core/trace).
  delivered: ['afgeleverd', 'delivered'],
  retrying: ['wordt opnieuw geprobeerd', 'retrying'],
  // The postal term: a letter that cannot be delivered is "onbestelbaar".
  'dead-lettered': ['onbestelbaar', 'dead-lettered'],
  retired: ['beëindigd (doel bestaat niet meer)', 'retired (target gone)'],
  queued: ['in de wachtrij', 'queued'],
  routing: ['wordt verdeeld', 'being routed'],
  routed: ['verdeeld', 'routed'],
  // Subscription states.
  pending: ['wacht op toestemming', 'pending'],
  active: ['actief', 'active'],
  rejected: ['geweigerd', 'rejected'],
  suspended: ['onderbroken', 'suspended'],
  push: ['push (wij bezorgen)', 'push'],
  pull: ['pull (u haalt op)', 'pull'],
  // Dead-letter reasons and failure codes.
  exhausted: ['pogingen opgebruikt', 'retries exhausted'],
  gone: ['doel bestaat niet meer (410)', 'target gone (410)'],
  'unsupported-media-type': ['inhoudstype niet ondersteund (415)', 'unsupported media type (415)'],
  redirect: ['doorverwijzing (niet gevolgd)', 'redirect (not followed)'],
  'target-unreachable': ['doel onbereikbaar', 'target unreachable'],
  'invalid-url': ['ongeldig adres', 'invalid URL'],
  'response-too-large': ['antwoord te groot', 'response too large'],
  'not-sendable': ['niet te versturen', 'not sendable'],
  'server-error': ['fout bij de ontvanger (5xx)', 'server error (5xx)'],
  'request-timeout': ['time-out bij de ontvanger', 'request timeout'],
  'key-in-progress': ['ontvanger is er nog mee bezig (409)', 'still in progress at the receiver (409)'],
  throttled: ['afgeremd door de ontvanger (429)', 'throttled (429)'],
  credential: ['toegangsgegevens werken niet', 'credential failed'],
  'claim-check': ['gegevens niet terug te lezen', 'claim check failed'],
  'subscription-retired': ['abonnement beëindigd', 'subscription retired'],
  'subscription-suspended': ['abonnement onderbroken', 'subscription suspended'],
  'subscription-not-active': ['abonnement niet actief', 'subscription not active'],
  'max-deliveries': ['te vaak opgehaald zonder afhandeling', 'received too often unsettled'],
  'not-entitled': ['geen recht meer op dit type', 'no longer entitled'],
  'no-longer-matches': ['past niet meer bij de filters', 'no longer matches'],
  paused: ['gepauzeerd', 'paused'],
  // The circuit breaker and replays.
  closed: ['gesloten (normaal)', 'closed (normal)'],
  open: ['open (afleveren staat even stil)', 'open (deliveries wait)'],
  'half-open': ['half open (één proefaflevering)', 'half-open (one probe delivery)'],
  running: ['bezig', 'running'],
  finished: ['klaar', 'finished'],
  cancelled: ['geannuleerd', 'cancelled'],
  failed: ['mislukt', 'failed'],
  'target-failing': ['doel faalt steeds', 'target failing'],
  'credential-required': ['toegangsgegevens nodig', 'credential required'],
};

/** The word for one of the API's values, in the reader's language; the value itself if unknown. */
export function word(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  const known = words[text];
  return known ? known[language() === 'nl' ? 0 : 1] : text;
}

/** A state or outcome as a marked span: coloured by its class, the API's value kept in `data-value`. */
export function stateBadge(kind: 'state' | 'outcome', value: unknown): HTMLSpanElement {
  const text = value === undefined || value === null ? '' : String(value);
  return h('span', { class: `${kind}-${text}`, 'data-value': text }, word(text));
}

/**
 * Text the API writes in English (a dead letter's detail, a status reason): marked as English, so
 * a screen reader reads it as English in the Dutch view (WCAG 2.1, 3.1.2 language of parts).
 */
export function apiText(value: unknown): HTMLSpanElement | string {
  const text = value === undefined || value === null ? '' : String(value);
  if (text === '') return '';
  return h('span', { lang: 'en' }, text);
}
