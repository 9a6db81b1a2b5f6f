/** The console's start: configuration, sign-in, the header, and the page the address names. */
import { apiFor } from './api.js';
import { filterTestPage } from './filter-test-page.js';
import { completeSignIn, currentSession, signIn, signOut, type ConsoleConfig } from './auth.js';
import { h } from './dom.js';
import { language, setLanguage, t } from './i18n.js';
import { eventSearchPage, eventTracePage } from './event-pages.js';
import { contractsPage, subscriptionsPage, type PageContext } from './pages.js';
import { subscriptionEditPage } from './subscription-edit-page.js';
import { subscriptionPage } from './subscription-page.js';

const main = document.getElementById('main')!;

async function start(): Promise<void> {
  const config = (await (await fetch('config.json')).json()) as ConsoleConfig;
  setLanguage(language());
  try {
    await completeSignIn(config);
  } catch (error) {
    main.replaceChildren(
      h('h1', {}, t('signInFailed')),
      h('p', { class: 'notice error' }, error instanceof Error ? error.message : String(error)),
    );
  }
  const render = async () => {
    drawHeader(render);
    const session = currentSession();
    if (!session) {
      const button = h('button', { type: 'button', class: 'primary' }, t('signIn'));
      button.addEventListener('click', () => void signIn(config));
      main.replaceChildren(h('h1', {}, 'Koerier'), h('p', {}, t('welcome')), button);
      return;
    }
    const context: PageContext = { api: apiFor(config, session), session, main, refresh: render };
    main.replaceChildren(h('p', {}, t('loading')));
    // #/page/part/part?query: each part percent-encoded, so a `/` in a source is not a separator.
    const [path = '', query = ''] = location.hash.split('?');
    const [, page, first, second] = path.split('/').map(decodeURIComponent);
    try {
      if (page === 'subscriptions' && first && second === 'edit') await subscriptionEditPage(context, first);
      else if (page === 'subscriptions' && first) await subscriptionPage(context, first);
      else if (page === 'events' && first && second) await eventTracePage(context, first, second);
      else if (page === 'events') await eventSearchPage(context, Object.fromEntries(new URLSearchParams(query)));
      else if (page === 'contracts') await contractsPage(context);
      else if (page === 'filters') await filterTestPage(context);
      else await subscriptionsPage(context);
    } catch (error) {
      main.replaceChildren(
        h('p', { class: 'notice error', role: 'alert' }, error instanceof Error ? error.message : String(error)),
      );
    }
    document.title = `${main.querySelector('h1')?.textContent ?? ''} — Koerier console`;
  };
  window.addEventListener('hashchange', () => {
    void render().then(() => main.focus());
  });
  await render();
}

function drawHeader(render: () => Promise<void>): void {
  const session = currentSession();
  document.getElementById('skip-link')!.textContent = t('skip');
  const nav = document.getElementById('nav')!;
  nav.setAttribute('aria-label', t('nav'));
  nav.replaceChildren(
    session
      ? h(
          'ul',
          {},
          h('li', {}, h('a', { href: '#/' }, t('subscriptions'))),
          h('li', {}, h('a', { href: '#/events' }, t('searchEvents'))),
          h('li', {}, h('a', { href: '#/contracts' }, t('contracts'))),
          h('li', {}, h('a', { href: '#/filters' }, t('tryFilter'))),
        )
      : '',
  );
  document.getElementById('who')!.textContent = session
    ? `${t('signedInAs')} ${session.clientId}${session.scopes.includes('admin') ? ` (${t('operator')})` : ''}`
    : '';
  const languageButton = document.getElementById('language')!;
  languageButton.textContent = t('switchLanguage');
  languageButton.setAttribute('lang', language() === 'nl' ? 'en' : 'nl');
  languageButton.onclick = () => {
    setLanguage(language() === 'nl' ? 'en' : 'nl');
    void render();
  };
  const out = document.getElementById('sign-out') as HTMLButtonElement;
  out.textContent = t('signOut');
  out.hidden = !session;
  out.onclick = () => {
    signOut();
    void render();
  };
}

void start();
