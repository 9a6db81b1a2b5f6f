/**
 * Which events an erasure takes (issue 31 item 4; docs/PRIVACY.md, "Erasure"): every event about one
 * person, named one of three ways — the CloudEvents `subject` the producer gave it, a list of
 * events by `source` and `id` (CE-17), or a value at a path into `data`. The selector names a
 * person, so it is personal data itself: it travels only to the worker that erases, and what is
 * kept of it is a keyed hash (./erasure-audit.ts).
 */

export type EventSelector =
  | { readonly kind: 'subject'; readonly subject: string }
  | { readonly kind: 'events'; readonly events: readonly { readonly source: string; readonly id: string }[] }
  | { readonly kind: 'data'; readonly path: readonly (string | number)[]; readonly equals: string | number | boolean };

/** An event as the stores hold it: its JSON text, and its data when that sits elsewhere (the claim check). */
export interface SelectableEvent {
  /** The event in the JSON event format, as accepted. */
  readonly json: string;
  /** Data kept by reference: read only when a `data` selector needs it. */
  readonly referencedData?: () => Promise<unknown>;
}

/** Whether the selector takes the event; an event that is not JSON is never taken. */
export async function selects(selector: EventSelector, event: SelectableEvent): Promise<boolean> {
  let value: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(event.json);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
    value = parsed as Record<string, unknown>;
  } catch {
    return false;
  }
  switch (selector.kind) {
    case 'subject':
      return value['subject'] === selector.subject;
    case 'events':
      return selector.events.some((named) => named.source === value['source'] && named.id === value['id']);
    case 'data': {
      const data = 'data' in value ? value['data'] : event.referencedData ? await event.referencedData() : undefined;
      return valueAt(data, selector.path) === selector.equals;
    }
  }
}

/** Whether the selector can only decide with an event's data, also data kept by reference. */
export function needsData(selector: EventSelector): boolean {
  return selector.kind === 'data';
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let at = value;
  for (const step of path) {
    if (typeof step === 'number') {
      if (!Array.isArray(at)) return undefined;
      at = at[step];
    } else {
      if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, step)) return undefined;
      at = (at as Record<string, unknown>)[step];
    }
  }
  return at;
}

/**
 * The steps of a JSONPath into `data`, of the one form an erasure needs: a definite path of member
 * names and array indexes, `$.leerling.id`, `$['leerling']['id']`, `$.groepen[0].naam` (RFC 9535's
 * normalized paths and the dotted shorthand; no wildcards, filters or descendants, which could take
 * events nobody meant). Undefined for anything else.
 */
export function parseDataPath(text: string): (string | number)[] | undefined {
  if (!text.startsWith('$')) return undefined;
  const steps: (string | number)[] = [];
  let rest = text.slice(1);
  const patterns: [RegExp, (match: RegExpExecArray) => string | number][] = [
    [/^\.([A-Za-z_][A-Za-z0-9_-]*)/, (m) => m[1]!],
    [/^\['((?:[^'\\]|\\.)*)'\]/, (m) => m[1]!.replace(/\\(.)/g, '$1')],
    [/^\[(0|[1-9][0-9]{0,8})\]/, (m) => Number(m[1])],
  ];
  while (rest !== '') {
    const found = patterns.map(([pattern, step]) => ({ match: pattern.exec(rest), step })).find((p) => p.match);
    if (!found?.match) return undefined;
    steps.push(found.step(found.match));
    rest = rest.slice(found.match[0].length);
  }
  return steps.length === 0 ? undefined : steps;
}
