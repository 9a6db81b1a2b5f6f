/**
 * Building the page from data without HTML strings: every value goes in as text (`textContent`),
 * so nothing a partner put in a subscription or an event can become markup in an operator's browser.
 */
type Child = Node | string | number | undefined | null | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A table with a caption and a header row; each row's cells as children. */
export function table(caption: string, headers: readonly string[], rows: readonly Child[][]): HTMLTableElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
  );
}

/** A definition list of label → value, leaving out values that are absent. */
export function facts(entries: readonly [string, Child][]): HTMLDListElement {
  const list = h('dl');
  for (const [label, value] of entries) {
    if (value === undefined || value === null || value === '') continue;
    list.append(h('dt', {}, label), h('dd', {}, value));
  }
  return list;
}

/** Tells screen readers what changed (the page's one live region). */
export function announce(message: string): void {
  const region = document.getElementById('announcer');
  if (region) region.textContent = message;
}
