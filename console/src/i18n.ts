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
  deadLetters: ['Dode brieven', 'Dead letters'],
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
