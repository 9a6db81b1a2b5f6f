/** Dutch first (the console serves Dutch public organisations), English beside it. */
export type Language = 'nl' | 'en';

const messages = {
  skip: ['Naar de inhoud', 'Skip to content'],
  nav: ['Hoofdmenu', 'Main menu'],
  subscriptions: ['Abonnementen', 'Subscriptions'],
  contracts: ['Contracten', 'Contracts'],
  signIn: ['Aanmelden', 'Sign in'],
  signOut: ['Afmelden', 'Sign out'],
  switchLanguage: ['English', 'Nederlands'],
  signedInAs: ['Aangemeld als', 'Signed in as'],
  operator: ['beheerder', 'operator'],
  welcome: [
    'Meld u aan om de abonnementen, afleveringen en contracten van uw organisatie te zien.',
    "Sign in to see your organisation's subscriptions, deliveries and contracts.",
  ],
  loading: ['Bezig met laden…', 'Loading…'],
  allSubscriptions: ['Alle abonnementen (beheerder)', 'All subscriptions (operator)'],
  yourSubscriptions: ['Uw abonnementen', 'Your subscriptions'],
  none: ['Geen.', 'None.'],
  id: ['Kenmerk', 'Id'],
  owner: ['Eigenaar', 'Owner'],
  delivery: ['Aflevering', 'Delivery'],
  sink: ['Doel', 'Target'],
  types: ['Typen', 'Types'],
  state: ['Status', 'State'],
  reason: ['Reden', 'Reason'],
  health: ['Gezondheid van de afleveringen', 'Delivery health'],
  successRate: ['Geslaagd (laatste pogingen)', 'Succeeded (recent attempts)'],
  medianLatency: ['Mediane duur', 'Median latency'],
  lastSuccess: ['Laatst geslaagd', 'Last success'],
  breaker: ['Stroomonderbreker', 'Circuit breaker'],
  failureStreak: ['Mislukt op rij', 'Failures in a row'],
  nextAttempt: ['Volgende poging', 'Next attempt'],
  attempts: ['Laatste pogingen', 'Recent attempts'],
  attemptCount: ['Pogingen', 'Attempts'],
  subscription: ['Abonnement', 'Subscription'],
  at: ['Tijdstip', 'Time'],
  attempt: ['Poging', 'Attempt'],
  outcome: ['Uitkomst', 'Outcome'],
  status: ['HTTP-status', 'HTTP status'],
  latency: ['Duur', 'Latency'],
  answer: ['Antwoord ontvanger', 'Receiver answer'],
  emptyBody: ['(leeg)', '(empty)'],
  // "Onbestelbaar" is the postal term Dutch operators use for a letter that cannot be delivered.
  deadLetters: ['Onbestelbare berichten', 'Dead letters'],
  events: ['Gebeurtenissen', 'Events'],
  redriveAll: ['Alles opnieuw aanbieden', 'Redrive all'],
  redriven: ['Opnieuw aangeboden', 'Redriven'],
  resume: ['Hervatten', 'Resume'],
  resumed: ['Abonnement hervat.', 'Subscription resumed.'],
  readOnly: [
    'Alleen lezen: hervatten en opnieuw aanbieden doet de partner met zijn eigen client (koerier subscriptions resume, koerier dead-letters redrive).',
    'Read only: the partner resumes and redrives with its own client (koerier subscriptions resume, koerier dead-letters redrive).',
  ],
  replays: ['Herhalingen', 'Replays'],
  notYet: ['Nog niet beschikbaar op deze gateway.', 'Not yet available on this gateway.'],
  notFound: ['Niet gevonden, of niet van u.', 'Not found, or not yours.'],
  back: ['Terug naar de abonnementen', 'Back to the subscriptions'],
  name: ['Naam', 'Name'],
  version: ['Versie', 'Version'],
  kind: ['Soort', 'Kind'],
  failed: ['Mislukt', 'Failed'],
  scanned: ['Doorzocht', 'Scanned'],
  matched: ['Gevonden', 'Matched'],
  sent: ['Verstuurd', 'Sent'],
  window: ['Periode', 'Window'],
  signInFailed: ['Aanmelden is mislukt', 'Sign-in failed'],
  tryFilter: ['Filter uitproberen', 'Try a filter'],
  tryFilterIntro: [
    'Plak filters zoals een abonnement ze schrijft (JSON: exact, prefix, suffix, all, any, not, sql) en zie welke van de laatste gearchiveerde gebeurtenissen die u mag ontvangen erop passen. Er wordt niets aangemaakt of verstuurd.',
    'Paste filters as a subscription writes them (JSON: exact, prefix, suffix, all, any, not, sql) and see which of the newest archived events you may receive they match. Nothing is created or sent.',
  ],
  tryFilterReadOnly: [
    'Een filter uitproberen mag wie abonnementen mag aanmaken: de partner doet het met zijn eigen client (koerier filter test --archived 50).',
    'Trying a filter is for whoever may create subscriptions: the partner does it with its own client (koerier filter test --archived 50).',
  ],
  filtersJson: ['Filters (JSON, allemaal moeten passen)', 'Filters (JSON, all must match)'],
  lastArchived: ['Aantal laatste gearchiveerde gebeurtenissen (1–1000)', 'Newest archived events to try (1–1000)'],
  tryIt: ['Uitproberen', 'Try it'],
  filtersNotJson: ['De filters zijn geen JSON.', 'The filters are not JSON.'],
  result: ['Resultaat', 'Result'],
  of: ['van', 'of'],
  eventsMatch: ['gebeurtenissen passen', 'events match'],
  archiveIncomplete: [
    'Het archief is niet tot het einde doorzocht: oudere gebeurtenissen zijn niet bekeken.',
    'The archive was not searched to its end: older events were not looked at.',
  ],
  noArchivedEvents: ['Geen gearchiveerde gebeurtenissen die u mag ontvangen.', 'No archived events you may receive.'],
  archivedEvents: ['Gearchiveerde gebeurtenissen, nieuwste eerst', 'Archived events, newest first'],
  source: ['Bron', 'Source'],
  type: ['Type', 'Type'],
  matches: ['Past', 'Matches'],
  sqlErrors: ['SQL-fouten (passen niet)', 'SQL errors (no match)'],
  yes: ['ja', 'yes'],
  no: ['nee', 'no'],
  searchEvents: ['Gebeurtenis zoeken', 'Find an event'],
  searchIntro: [
    'Zoek één gebeurtenis op bron en kenmerk om te zien wat ermee gebeurde, of zoek in het archief op type en tijd.',
    'Find one event by source and id to see what became of it, or search the archive by type and time.',
  ],
  eventId: ['Kenmerk van de gebeurtenis (id)', 'Event id'],
  eventSource: ['Bron (source)', 'Source'],
  eventType: ['Type (type)', 'Type'],
  since: ['Vanaf', 'From'],
  until: ['Tot', 'Until'],
  search: ['Zoeken', 'Search'],
  showTrace: ['Volgen', 'Trace'],
  needSourceAndId: [
    'Vul bron en kenmerk allebei in om één gebeurtenis te volgen.',
    'Fill in both source and id to trace one event.',
  ],
  foundEvents: ['Gevonden gebeurtenissen, nieuwste eerst', 'Events found, newest first'],
  trace: ['Verloop van een gebeurtenis', 'Event trace'],
  acceptedAt: ['Aangenomen op', 'Accepted at'],
  publisher: ['Afzender', 'Publisher'],
  idempotencyKey: ['Idempotency-Key', 'Idempotency-Key'],
  correlationId: ['Correlatie-id', 'Correlation id'],
  duplicates: [
    'Later nogmaals aangeboden (dubbel, niet afgeleverd)',
    'Published again later (duplicate, not delivered)',
  ],
  duplicateOf: ['Dubbel van de aanname op', 'Duplicate of the acceptance at'],
  routedAt: ['Verdeeld op', 'Routed at'],
  routedTo: ['Verdeeld over abonnementen', 'Routed to subscriptions'],
  traceState: ['Verwerking', 'Processing'],
  deliveryState: ['Stand van de aflevering', 'Delivery state'],
  historyTruncated: [
    'Oudere pogingen van dit abonnement zijn niet meer gelezen.',
    'Older attempts of this subscription were not read.',
  ],
  noneVisible: ['Geen abonnementen van u.', 'None of yours.'],
  edit: ['Wijzigen', 'Edit'],
  editSubscription: ['Abonnement wijzigen', 'Edit subscription'],
  filtersOptional: ['Filters (JSON; leeg: geen filters)', 'Filters (JSON; empty: no filters)'],
  typesComma: ['Typen (gescheiden door komma’s)', 'Types (comma separated)'],
  credential: ['Toegangsgegevens voor het doel', 'Credential for the target'],
  credentialKeep: ['Ongewijzigd laten', 'Keep as it is'],
  credentialToken: ['Vast toegangstoken', 'Fixed access token'],
  credentialClient: ['OAuth client credentials', 'OAuth client credentials'],
  accessToken: ['Toegangstoken', 'Access token'],
  tokenUrl: ['Token-adres (https)', 'Token URL (https)'],
  clientIdLabel: ['Client-id', 'Client id'],
  clientSecret: ['Clientgeheim', 'Client secret'],
  scope: ['Scope (optioneel)', 'Scope (optional)'],
  save: ['Opslaan', 'Save'],
  saved: ['Abonnement opgeslagen.', 'Subscription saved.'],
  nothingChanged: ['Er is niets gewijzigd.', 'Nothing changed.'],
  pause: ['Pauzeren', 'Pause'],
  paused: ['Abonnement gepauzeerd.', 'Subscription paused.'],
  revalidate: ['Opnieuw valideren', 'Validate again'],
  revalidated: ['Validatie opnieuw verstuurd.', 'Validation sent again.'],
  redriveOne: ['Opnieuw aanbieden', 'Redrive'],
  actions: ['Acties', 'Actions'],
  charts: ['Afleveringen in de laatste 7 dagen', 'Deliveries in the last 7 days'],
  chartOutcomes: ['Afgeleverd, mislukt en onbestelbaar per uur', 'Delivered, failed and dead-lettered per hour'],
  chartLatency: [
    'Duur van de aflevering per uur (mediaan en hoogste)',
    'Delivery latency per hour (median and highest)',
  ],
  chartFrom: ['Uit de bewaarde pogingen', 'From the kept attempts'],
  chartPartial: [
    'Alleen de nieuwste pogingen zijn geteld: het abonnement had er meer dan de grafiek leest.',
    'Only the newest attempts are counted: the subscription had more than the chart reads.',
  ],
  noAttemptsWeek: ['Geen pogingen in de laatste 7 dagen.', 'No attempts in the last 7 days.'],
  median: ['mediaan', 'median'],
  highest: ['hoogste', 'highest'],
  perHour: ['per uur', 'per hour'],
} as const satisfies Record<string, readonly [string, string]>;

export type MessageKey = keyof typeof messages;

let current: Language =
  (localStorage.getItem('koerier.language') as Language | null) ?? (navigator.language.startsWith('nl') ? 'nl' : 'en');

export function language(): Language {
  return current;
}

export function setLanguage(next: Language): void {
  current = next;
  localStorage.setItem('koerier.language', next);
  document.documentElement.lang = next;
}

export function t(key: MessageKey): string {
  return messages[key][current === 'nl' ? 0 : 1];
}

/** Times in the reader's language, to the second. */
export function when(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(current === 'nl' ? 'nl-NL' : 'en-GB');
}
