/**
 * Changing a subscription (issue 30 item 4): its sink, types, filters and the credential Koerier
 * sends to the sink, as a JSON merge patch (RFC 7396) of only the members changed, with the ETag
 * read as If-Match so a change made meanwhile is not overwritten. The gateway checks the result as
 * it checks a new subscription; a refusal shows its detail and the members it names. A new sink
 * gets the validation handshake again: the page after saving shows the state it left.
 */
import { ApiError } from './api.js';
import { mayManage, refusalText, type PageContext } from './actions.js';
import { text } from './delivery-tables.js';
import { announce, h } from './dom.js';
import { t } from './i18n.js';
import { backLink } from './subscription-page.js';

type Json = Record<string, unknown>;

export async function subscriptionEditPage(context: PageContext, id: string): Promise<void> {
  const { api, main, session } = context;
  const heading = h('h1', {}, `${t('editSubscription')} ${id}`);
  if (!mayManage(session)) {
    main.replaceChildren(heading, backLink(), h('p', { class: 'notice' }, t('readOnly')));
    return;
  }
  const read = await api.GET('/subscriptions/{id}', { params: { path: { id } } });
  const subscription: Json = read.data ?? {};
  const etag = read.response.headers.get('etag') ?? undefined;
  const push = (subscription['delivery'] ?? 'push') === 'push';

  const input = (name: string, label: string, value: string, attributes: Record<string, string> = {}) => {
    const field = h('input', { id: `edit-${name}`, name, value, spellcheck: 'false', ...attributes });
    return { field, wrapper: h('div', { class: 'field' }, h('label', { for: `edit-${name}` }, label), field) };
  };
  const sink = input('sink', t('sink'), text(subscription['sink']), { type: 'url' });
  const types = input('types', t('typesComma'), ((subscription['types'] as string[] | undefined) ?? []).join(', '));
  const filtersText = subscription['filters'] ? JSON.stringify(subscription['filters'], null, 2) : '';
  const filters = h('textarea', { id: 'edit-filters', name: 'filters', rows: '6', cols: '70', spellcheck: 'false' });
  filters.value = filtersText;
  const credential = credentialFields();
  const result = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'subscription-edit' },
    push ? sink.wrapper : '',
    types.wrapper,
    h('div', { class: 'field' }, h('label', { for: 'edit-filters' }, t('filtersOptional')), filters),
    push ? credential.fieldset : '',
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, t('save'))),
    result,
  );
  form.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    const patch: Json = {};
    if (push && sink.field.value.trim() !== text(subscription['sink'])) patch['sink'] = sink.field.value.trim();
    const newTypes = types.field.value
      .split(',')
      .map((type) => type.trim())
      .filter(Boolean);
    if (newTypes.join(',') !== ((subscription['types'] as string[] | undefined) ?? []).join(','))
      patch['types'] = newTypes.length === 0 ? null : newTypes;
    if (filters.value.trim() !== filtersText.trim()) {
      try {
        patch['filters'] = filters.value.trim() === '' ? null : (JSON.parse(filters.value) as unknown);
      } catch {
        return shown(result, t('filtersNotJson'), []);
      }
    }
    const newCredential = push ? credential.value() : undefined;
    if (newCredential) patch['sinkcredential'] = newCredential;
    if (Object.keys(patch).length === 0) return shown(result, t('nothingChanged'), []);
    void save(context, id, patch, etag, result);
  });
  main.replaceChildren(
    heading,
    h('p', {}, h('a', { href: `#/subscriptions/${encodeURIComponent(id)}` }, `${t('back')}: ${id}`)),
    form,
  );
}

async function save(context: PageContext, id: string, patch: Json, etag: string | undefined, result: HTMLElement) {
  try {
    await context.api.PATCH('/subscriptions/{id}', {
      params: { path: { id }, header: etag ? { 'If-Match': etag } : {} },
      // The client's types name the request body; a merge patch may hold nulls, which they do not.
      body: patch as never,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    location.hash = `#/subscriptions/${encodeURIComponent(id)}`;
    announce(t('saved'));
  } catch (error) {
    const issues = error instanceof ApiError ? error.errors.map((e) => `${e.attribute ?? ''}: ${e.message}`) : [];
    shown(result, refusalText(error), issues);
  }
}

function shown(result: HTMLElement, message: string, issues: readonly string[]): void {
  result.replaceChildren(
    h('p', { class: 'notice error', role: 'alert' }, message),
    issues.length === 0 ? '' : h('ul', {}, ...issues.map((issue) => h('li', {}, h('code', {}, issue)))),
  );
}

/**
 * The sink credential: kept as it is (the API never shows it back), a fixed access token, or OAuth
 * client credentials. Only the chosen kind's fields are shown, and sent.
 */
function credentialFields(): { fieldset: HTMLFieldSetElement; value: () => Json | undefined } {
  const field = (name: string, label: string, type = 'text') => {
    const element = h('input', { id: `credential-${name}`, name, type, autocomplete: 'off', spellcheck: 'false' });
    return {
      element,
      wrapper: h('div', { class: 'field' }, h('label', { for: `credential-${name}` }, label), element),
    };
  };
  const token = field('accesstoken', t('accessToken'), 'password');
  const tokenUrl = field('tokenurl', t('tokenUrl'), 'url');
  const clientId = field('clientid', t('clientIdLabel'));
  const secret = field('clientsecret', t('clientSecret'), 'password');
  const scope = field('scope', t('scope'));
  const tokenPart = h('div', { hidden: true }, token.wrapper);
  const clientPart = h('div', { hidden: true }, tokenUrl.wrapper, clientId.wrapper, secret.wrapper, scope.wrapper);
  const choice = (value: string, label: string, checked = false) =>
    h(
      'div',
      { class: 'choice' },
      h('input', { type: 'radio', name: 'credentialtype', id: `credential-${value}`, value, checked }),
      h('label', { for: `credential-${value}` }, label),
    );
  const fieldset = h(
    'fieldset',
    {},
    h('legend', {}, t('credential')),
    choice('keep', t('credentialKeep'), true),
    choice('ACCESSTOKEN', t('credentialToken')),
    choice('CLIENTCREDENTIALS', t('credentialClient')),
    tokenPart,
    clientPart,
  );
  const chosen = () => (fieldset.querySelector('input[name=credentialtype]:checked') as HTMLInputElement).value;
  fieldset.addEventListener('change', () => {
    tokenPart.hidden = chosen() !== 'ACCESSTOKEN';
    clientPart.hidden = chosen() !== 'CLIENTCREDENTIALS';
  });
  const value = (): Json | undefined => {
    if (chosen() === 'ACCESSTOKEN') return { credentialtype: 'ACCESSTOKEN', accesstoken: token.element.value };
    if (chosen() !== 'CLIENTCREDENTIALS') return undefined;
    return {
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: tokenUrl.element.value,
      clientid: clientId.element.value,
      clientsecret: secret.element.value,
      ...(scope.element.value ? { scope: scope.element.value } : {}),
    };
  };
  return { fieldset, value };
}
