/**
 * What an expression pins: conditions on single attributes that every event the expression is
 * `true` for (without error) satisfies. The route index files a subscription under them so the
 * router never evaluates the expression for events that cannot match (route-keys.ts), and the
 * entitlement check reads the `type` ones as it reads `exact` and `prefix` filters.
 *
 * The result is a conjunction of disjunctions: every inner list holds at least one true pin.
 * Lifted: `attr = 'text'`; `'text' = attr` and `attr IN ('a', 'b', …)` for attributes that are
 * always strings (an Integer extension compares as an integer there: `'05' = n` holds for n = 5,
 * whose text is "5"); `attr LIKE 'text'` and `attr LIKE 'prefix%'`; AND of those (each operand a
 * conjunct); OR and XOR of operands that all pin something (one disjunction). NOT pins nothing.
 */
import { likeAnchor } from './like.js';
import type { CesqlNode } from './syntax.js';

export interface AttributePin {
  readonly kind: 'eq' | 'pre';
  readonly attribute: string;
  readonly value: string;
}

/** Context attributes whose values are always strings, so any cast of the other side is to String. */
const STRING_ATTRIBUTES = new Set([
  'id',
  'source',
  'specversion',
  'type',
  'subject',
  'datacontenttype',
  'dataschema',
  'time',
]);

export function pinsOf(node: CesqlNode): AttributePin[][] {
  switch (node.kind) {
    case 'logic': {
      if (node.operator === 'AND') return node.operands.flatMap(pinsOf);
      const branches = node.operands.map((operand) => narrowest(pinsOf(operand)));
      if (branches.some((branch) => branch === undefined)) return [];
      return [branches.flat() as AttributePin[]];
    }
    case 'comparison': {
      if (node.operator !== '=') return [];
      const { left, right } = node;
      if (left.kind === 'attribute' && right.kind === 'literal' && typeof right.value === 'string')
        return [[{ kind: 'eq', attribute: left.name, value: right.value }]];
      if (right.kind === 'attribute' && STRING_ATTRIBUTES.has(right.name) && left.kind === 'literal')
        return [[{ kind: 'eq', attribute: right.name, value: String(left.value) }]];
      return [];
    }
    case 'in': {
      const { operand, set } = node;
      if (node.negated || operand.kind !== 'attribute' || !STRING_ATTRIBUTES.has(operand.name)) return [];
      const values: string[] = [];
      for (const item of set) {
        if (item.kind !== 'literal') return [];
        values.push(String(item.value));
      }
      return [[...new Set(values)].map((value) => ({ kind: 'eq', attribute: operand.name, value }))];
    }
    case 'like': {
      if (node.negated || node.operand.kind !== 'attribute') return [];
      const anchor = likeAnchor(node.pattern);
      if (anchor === undefined) return [];
      const attribute = node.operand.name;
      if ('exact' in anchor) return [[{ kind: 'eq', attribute, value: anchor.exact }]];
      return anchor.prefix === '' ? [] : [[{ kind: 'pre', attribute, value: anchor.prefix }]];
    }
    // NOT, arithmetic and the rest say nothing about any one attribute's value.
    case 'not':
    case 'negate':
    case 'arithmetic':
    case 'attribute':
    case 'call':
    case 'exists':
    case 'literal':
      return [];
  }
}

/** The conjunct with the fewest alternatives, preferring one on `type`; undefined when none. */
function narrowest(conjuncts: AttributePin[][]): AttributePin[] | undefined {
  const score = (pins: AttributePin[]) => pins.length * 2 - (pins.every((pin) => pin.attribute === 'type') ? 1 : 0);
  return conjuncts.reduce<AttributePin[] | undefined>(
    (best, next) => (best === undefined || score(next) < score(best) ? next : best),
    undefined,
  );
}
