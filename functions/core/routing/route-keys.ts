/**
 * The route index: how the router finds the subscriptions an event may match without looking at
 * the others. Each routable subscription is written under one or more route keys, each a
 * *necessary* condition of its filters (an event it matches satisfies at least one of them); the
 * router derives the keys an event satisfies and reads only those. Whatever the index cannot
 * express is checked in memory on the candidates (`subscriptionMatches`).
 *
 * Three kinds of key, most selective first:
 * - `eq`: the event's attributes equal given values. Built from `source`, `types` and the `exact`
 *   filters of the subscription's conjunction, combined (up to three attributes), so a subscription
 *   to one person's events (`subject`) together with a type sits under a key only that person's
 *   events of that type reach — a million such subscriptions cost an event one lookup.
 * - `pre`: an attribute starts with an anchor: the prefix filter's value cut back to a separator
 *   (`.`, `:`, `/`), so the router finds it from the event's value without knowing the prefixes.
 * - `any`: no usable condition (e.g. only `suffix` or `not`, or a `sql` expression that pins no
 *   attribute); entitlement keeps these rare.
 *
 * A `sql` filter contributes the conditions its CESQL expression pins (sql-route-conditions.ts).
 *
 * A key's *shape* (`eq:subject,type`, `pre:type:2`, `any`) says how to compute it from an event.
 * The router reads the set of shapes in use and, per event, looks up one key per shape the event
 * has the attributes for: per-event reads depend on how many shapes exist, never on how many
 * subscriptions do.
 */
import { createHash } from 'node:crypto';
import { attributeString, filterMatches, type EventAttributes, type Filter } from '../subscriptions/filters.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { sqlRouteConjuncts } from './sql-route-conditions.js';

/** What decides whether a subscription wants an event. */
export type SubscriptionMatch = Pick<Subscription, 'source' | 'types' | 'filters' | 'zgwAbonnement'>;

export type RouteShape = string;

export interface RouteEntry {
  readonly routeKey: string;
  readonly shape: RouteShape;
}

/** Attributes one `eq` key combines at most. More would multiply shapes without narrowing much. */
const MAX_KEY_ATTRIBUTES = 3;
/** Entries per subscription at most; beyond that the index keeps a looser (still necessary) condition. */
const MAX_ENTRIES = 16;
/** Separators a `pre` anchor may be cut at, and the deepest anchor kept. */
const SEPARATORS = new Set(['.', ':', '/']);
const MAX_ANCHOR_DEPTH = 8;
/** Keys longer than this are replaced by a hash (DynamoDB partition keys hold at most 2048 bytes). */
const MAX_PLAIN_KEY_LENGTH = 512;

export const CATCH_ALL_SHAPE: RouteShape = 'any';

/** Whether `attributes` satisfy every condition of the subscription (source, types, filters). */
export function subscriptionMatches(match: SubscriptionMatch, attributes: EventAttributes): boolean {
  if (match.source !== undefined && attributes['source'] !== match.source) return false;
  if (match.types && match.types.length > 0 && !match.types.includes(String(attributes['type']))) return false;
  return (match.filters ?? []).every((filter) => filterMatches(filter, attributes));
}

type Condition =
  | { readonly kind: 'eq'; readonly values: Readonly<Record<string, string>> }
  | { readonly kind: 'pre'; readonly attribute: string; readonly value: string };

/** The route entries of a subscription: at least one (the catch-all when nothing narrower holds). */
export function routeEntriesOf(match: SubscriptionMatch): RouteEntry[] {
  const conjuncts: Condition[][] = [];
  if (match.source !== undefined) conjuncts.push([{ kind: 'eq', values: { source: match.source } }]);
  if (match.types && match.types.length > 0)
    conjuncts.push(match.types.map((type) => ({ kind: 'eq', values: { type } })));
  const alternatives = bestAlternatives([...conjuncts, ...(match.filters ?? []).flatMap(conditionsOfConjunct)]);
  // `[]` means the conjunction cannot be satisfied (two different exact values for one attribute):
  // such a subscription matches nothing, and an empty entry list routes it nowhere.
  if (alternatives === undefined) return [{ routeKey: CATCH_ALL_SHAPE, shape: CATCH_ALL_SHAPE }];
  const entries = new Map<string, RouteEntry>();
  for (const condition of alternatives) {
    const entry = condition.kind === 'eq' ? eqEntry(condition.values) : preEntry(condition.attribute, condition.value);
    entries.set(entry.routeKey, entry);
  }
  return [...entries.values()];
}

/** The keys an event satisfies, one per shape it carries the attributes for. */
export function routeKeysOf(attributes: EventAttributes, shapes: Iterable<RouteShape>): string[] {
  const keys = new Set<string>();
  for (const shape of shapes) {
    const key = routeKeyOf(attributes, shape);
    if (key !== undefined) keys.add(key);
  }
  return [...keys];
}

function routeKeyOf(attributes: EventAttributes, shape: RouteShape): string | undefined {
  if (shape === CATCH_ALL_SHAPE) return CATCH_ALL_SHAPE;
  const [kind, rest = ''] = splitOnce(shape, ':');
  if (kind === 'eq') {
    const values: Record<string, string> = {};
    for (const name of rest.split(',')) {
      const value = attributeString(attributes[name]);
      if (value === undefined) return undefined;
      values[name] = value;
    }
    return eqEntry(values).routeKey;
  }
  if (kind === 'pre') {
    const [attribute, depthText] = splitOnce(rest, ':');
    const value = attributeString(attributes[attribute]);
    const depth = Number(depthText);
    if (value === undefined || !Number.isInteger(depth)) return undefined;
    const anchor = anchorAtDepth(value, depth);
    return anchor === undefined ? undefined : keyText(`pre:${attribute}:${depth}`, [anchor]);
  }
  return undefined;
}

function conditionsOfConjunct(filter: Filter): Condition[][] {
  if ('all' in filter) return filter.all.flatMap(conditionsOfConjunct);
  if ('sql' in filter) return sqlRouteConjuncts(filter.sql);
  const alternatives = alternativesOf(filter);
  return alternatives === undefined ? [] : [alternatives];
}

/** Necessary conditions of one filter, as alternatives; undefined when none can be indexed. */
function alternativesOf(filter: Filter): Condition[] | undefined {
  if ('exact' in filter) return [{ kind: 'eq', values: filter.exact }];
  if ('prefix' in filter) {
    const attribute = 'type' in filter.prefix ? 'type' : Object.keys(filter.prefix).sort()[0]!;
    return [{ kind: 'pre', attribute, value: filter.prefix[attribute]! }];
  }
  if ('all' in filter || 'sql' in filter) return bestAlternatives(conditionsOfConjunct(filter));
  if ('any' in filter) {
    const children = filter.any.map(alternativesOf);
    if (children.some((child) => child === undefined)) return undefined;
    const union = (children as Condition[][]).flat();
    return union.length <= MAX_ENTRIES ? union : undefined;
  }
  return undefined;
}

/**
 * The narrowest alternatives of a conjunction: all its equality conjuncts combined (cross
 * product, merged), or else its single conjunct with the fewest alternatives. Undefined when
 * no conjunct can be indexed.
 */
function bestAlternatives(conjuncts: Condition[][]): Condition[] | undefined {
  const equalities = conjuncts.filter((alternatives) => alternatives.every((c) => c.kind === 'eq'));
  const combined = equalities.length > 0 ? combineEqualities(equalities) : undefined;
  if (combined) return combined;
  // No equality fits in MAX_ENTRIES keys: index by the narrowest other conjunct, or not at all
  // (the catch-all key), never by an empty equality no event could produce.
  const others = conjuncts.filter(
    (alternatives) => !alternatives.every((c) => c.kind === 'eq') && alternatives.length <= MAX_ENTRIES,
  );
  if (others.length === 0) return undefined;
  return others.reduce((best, next) => (next.length < best.length ? next : best));
}

function combineEqualities(conjuncts: Condition[][]): Condition[] | undefined {
  // Dropping a conjunct only loosens the condition, so the widest go first until the product fits.
  const kept = [...conjuncts].sort((a, b) => a.length - b.length);
  while (kept.reduce((product, alternatives) => product * alternatives.length, 1) > MAX_ENTRIES) kept.pop();
  if (kept.length === 0) return undefined;
  let product: Record<string, string>[] = [{}];
  for (const alternatives of kept) {
    const next: Record<string, string>[] = [];
    for (const partial of product) {
      for (const condition of alternatives) {
        const merged = mergeEqualities(partial, (condition as Extract<Condition, { kind: 'eq' }>).values);
        if (merged) next.push(merged);
      }
    }
    product = next;
  }
  return product.map((values) => ({ kind: 'eq', values }));
}

function mergeEqualities(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  const merged: Record<string, string> = { ...a };
  for (const [name, value] of Object.entries(b)) {
    if (merged[name] !== undefined && merged[name] !== value) return undefined;
    merged[name] = value;
  }
  return merged;
}

/**
 * Which attributes an `eq` key keeps when there are more than three: those most likely to single
 * out few subscriptions first — `subject` (one person, one case), then extensions, then `type`,
 * `source`, and the rest of the core attributes.
 */
function keyPreference(name: string): number {
  if (name === 'subject') return 0;
  if (name === 'type') return 2;
  if (name === 'source') return 3;
  if (
    ['id', 'specversion', 'time', 'datacontenttype', 'dataschema', 'dataref', 'sequence', 'sequencetype'].includes(name)
  )
    return 4;
  return 1;
}

function eqEntry(values: Readonly<Record<string, string>>): RouteEntry {
  const names = Object.keys(values)
    .sort((a, b) => keyPreference(a) - keyPreference(b) || a.localeCompare(b))
    .slice(0, MAX_KEY_ATTRIBUTES)
    .sort();
  const shape = `eq:${names.join(',')}`;
  return {
    shape,
    routeKey: keyText(
      shape,
      names.map((name) => values[name]!),
    ),
  };
}

function preEntry(attribute: string, prefix: string): RouteEntry {
  const { anchor, depth } = anchorOfPrefix(prefix);
  const shape = `pre:${attribute}:${depth}`;
  return { shape, routeKey: keyText(shape, [anchor]) };
}

/** The prefix cut back to just after its last separator (at most the MAX_ANCHOR_DEPTH-th). */
function anchorOfPrefix(prefix: string): { anchor: string; depth: number } {
  let depth = 0;
  let end = 0;
  for (let i = 0; i < prefix.length && depth < MAX_ANCHOR_DEPTH; i++) {
    if (SEPARATORS.has(prefix[i]!)) {
      depth++;
      end = i + 1;
    }
  }
  return { anchor: prefix.slice(0, end), depth };
}

/** The value cut just after its `depth`-th separator; undefined when it has fewer. */
function anchorAtDepth(value: string, depth: number): string | undefined {
  if (depth === 0) return '';
  let seen = 0;
  for (let i = 0; i < value.length; i++) {
    if (SEPARATORS.has(value[i]!) && ++seen === depth) return value.slice(0, i + 1);
  }
  return undefined;
}

function keyText(shape: RouteShape, values: readonly string[]): string {
  const plain = `${shape}|${values.map(keyPart).join('|')}`;
  if (plain.length <= MAX_PLAIN_KEY_LENGTH) return plain;
  return `${shape}#${createHash('sha256').update(plain).digest('base64url')}`;
}

/** In `u` mode `\p{Cs}` matches only an unpaired surrogate; a proper pair is one code point. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
const UNPAIRED_SURROGATES = /(\p{Cs})/u;

/**
 * A value as it goes into a key: percent-encoded, so `|` never occurs inside a value. Never
 * throws: `encodeURIComponent` throws `URIError` on an unpaired surrogate, which a JSON string may
 * hold (`"\ud800"`), so each of those is written `%u` and four hex digits instead — text
 * `encodeURIComponent` never writes (it encodes `%` as `%25`), so different values keep different
 * keys, and well-formed values keep the keys they always had.
 */
function keyPart(value: string): string {
  if (!UNPAIRED_SURROGATE.test(value)) return encodeURIComponent(value);
  return value
    .split(UNPAIRED_SURROGATES)
    .map((piece, index) =>
      index % 2 === 1 ? `%u${piece.charCodeAt(0).toString(16).toUpperCase()}` : encodeURIComponent(piece),
    )
    .join('');
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}
