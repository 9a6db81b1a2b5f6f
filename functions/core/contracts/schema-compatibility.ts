/**
 * Compatibility of two JSON Schemas of one message payload (issue 14, item 2), decided as set
 * inclusion: `backward` when every instance the previous schema accepts the next one accepts too
 * (consumers on the new version read events published under the old one), `forward` when every
 * instance the next schema accepts the previous one accepts (consumers still on the old version
 * read events published under the new one). Neither is `breaking`.
 *
 * The check is sound, not complete: a "yes" is proven keyword by keyword, and whatever it cannot
 * prove (a keyword it does not model, `oneOf` branches that differ) is a finding, so an unknown
 * change is never called compatible. It reads the open content model as JSON Schema defines it
 * (an object without `additionalProperties: false` takes any other member), which is where
 * registries that compare schema text instead of the sets they accept go wrong: adding an optional
 * field to an open object is not backward compatible, since an old event may carry that member
 * with another type.
 *
 * Pure: no I/O. `$ref` is resolved inside the schema's own document (`#/...`); schemas given as
 * dereferenced object graphs (the AsyncAPI parser's) may be recursive, and a pair already being
 * compared counts as included (the coinductive reading of recursive schemas).
 */
import { deepEqual, isObject, type JsonValue } from './json-values.js';
import {
  ANNOTATIONS,
  enumValues,
  lowerBound,
  mergedAllOf,
  multipleOfReasons,
  numericBounds,
  reason,
  resolve,
  sameWhenSet,
  stringList,
  typesOf,
  upperBound,
  valueFits,
  type JsonSchema,
  type Reason,
  type SchemaObject,
} from './schema-keywords.js';

export type { JsonSchema } from './schema-keywords.js';

export type Verdict = 'identical' | 'full' | 'backward' | 'forward' | 'breaking';

export interface CompatibilityFinding {
  /** Which direction fails: `backward` (old events vs the new schema) or `forward` (new events vs the old schema). */
  readonly direction: 'backward' | 'forward';
  /** Where in the instance, as a JSON Pointer (`/*` for every array item, `/{additional}` for undeclared members). */
  readonly pointer: string;
  readonly change: string;
  readonly message: string;
}

export interface Compatibility {
  readonly verdict: Verdict;
  readonly backward: boolean;
  readonly forward: boolean;
  readonly findings: readonly CompatibilityFinding[];
}

/** Keywords `includes` models; any other constraining keyword must be unchanged to count as compatible. */
const MODELLED = new Set([
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minProperties',
  'maxProperties',
  'allOf',
  'anyOf',
  'oneOf',
  '$ref',
]);

export function compareSchemas(previous: JsonSchema, next: JsonSchema): Compatibility {
  const backwardReasons = new Inclusion(previous, next).reasons(previous, next, '');
  const forwardReasons = new Inclusion(next, previous).reasons(next, previous, '');
  const findings = [
    ...backwardReasons.map((reason) => ({ direction: 'backward' as const, ...reason })),
    ...forwardReasons.map((reason) => ({ direction: 'forward' as const, ...reason })),
  ];
  const backward = backwardReasons.length === 0;
  const forward = forwardReasons.length === 0;
  const verdict: Verdict =
    backward && forward
      ? deepEqual(previous as JsonValue, next as JsonValue)
        ? 'identical'
        : 'full'
      : backward
        ? 'backward'
        : forward
          ? 'forward'
          : 'breaking';
  return { verdict, backward, forward, findings };
}

/** Whether every instance of `a` (in document `rootA`) is an instance of `b` (in `rootB`); the reasons why not. */
class Inclusion {
  private readonly inProgress = new Map<object, Set<object>>();

  constructor(
    private readonly rootA: JsonSchema,
    private readonly rootB: JsonSchema,
  ) {}

  reasons(aIn: unknown, bIn: unknown, pointer: string): Reason[] {
    const a = mergedAllOf(resolve(aIn, this.rootA));
    const b = mergedAllOf(resolve(bIn, this.rootB));
    if (b === true || a === false) return [];
    if (b === false) return [reason(pointer, 'refused', 'no value is accepted here any more')];
    if (deepEqual(a as JsonValue, b as JsonValue) && !hasRef(a)) return [];
    const objectA: SchemaObject = a === true ? {} : a;
    if (this.seen(objectA, b)) return [];
    try {
      return this.compare(objectA, b, pointer);
    } finally {
      this.inProgress.get(objectA)?.delete(b);
    }
  }

  private seen(a: object, b: object): boolean {
    const partners = this.inProgress.get(a) ?? new Set<object>();
    this.inProgress.set(a, partners);
    if (partners.has(b)) return true;
    partners.add(b);
    return false;
  }

  private compare(a: SchemaObject, b: SchemaObject, pointer: string): Reason[] {
    // A union on the left: each branch must fit. On the right: one branch must take all of `a`.
    const unionA = (a['anyOf'] ?? a['oneOf']) as unknown[] | undefined;
    if (Array.isArray(unionA) && onlyKeywords(a, ['anyOf', 'oneOf']))
      return unionA.flatMap((branch) => this.reasons(branch, b, pointer));
    const unionB = b['anyOf'] as unknown[] | undefined;
    if (Array.isArray(unionB) && onlyKeywords(b, ['anyOf'])) {
      const fits = unionB.some((branch) => this.reasons(a, branch, pointer).length === 0);
      return fits ? [] : [reason(pointer, 'union-narrowed', 'no branch of anyOf takes every value that was accepted')];
    }
    const unsupported = Object.keys(b).filter(
      (keyword) => !ANNOTATIONS.has(keyword) && !MODELLED.has(keyword) && !keyword.startsWith('x-'),
    );
    const reasons: Reason[] = [];
    for (const keyword of [
      ...unsupported,
      ...(b['oneOf'] === undefined ? [] : ['oneOf']),
      ...(a['oneOf'] === undefined || unionA ? [] : ['oneOf']),
    ]) {
      if (!deepEqual(a[keyword] as JsonValue, b[keyword] as JsonValue)) {
        reasons.push(
          reason(
            pointer,
            'unsupported-keyword',
            `"${keyword}" changed, and the comparison does not model it: treated as incompatible`,
          ),
        );
      }
    }
    const values = enumValues(a);
    if (values) return [...reasons, ...values.flatMap((value) => this.valueReasons(value, b, pointer))];
    if (enumValues(b)) return [...reasons, reason(pointer, 'enum-added', 'only listed values are accepted now')];
    return [...reasons, ...this.typeReasons(a, b, pointer)];
  }

  private valueReasons(value: JsonValue, b: SchemaObject, pointer: string): Reason[] {
    return valueFits(value, b, this.rootB)
      ? []
      : [reason(pointer, 'enum-value-refused', `the value ${JSON.stringify(value)} is not accepted any more`)];
  }

  private typeReasons(a: SchemaObject, b: SchemaObject, pointer: string): Reason[] {
    const typesA = typesOf(a);
    const typesB = typesOf(b);
    const reasons: Reason[] = [];
    const kept = typesA.filter((type) => typesB.includes(type) || (type === 'integer' && typesB.includes('number')));
    const lost = typesA.filter((type) => !kept.includes(type));
    if (lost.length > 0) {
      const change = a['type'] === undefined ? 'type-added' : 'type-changed';
      reasons.push(
        reason(
          pointer,
          change,
          `values of type ${lost.join(', ')} are not accepted any more (${typesB.join(', ')} only)`,
        ),
      );
    }
    for (const type of kept) reasons.push(...this.facetReasons(type, a, b, pointer));
    return reasons;
  }

  private facetReasons(type: string, a: SchemaObject, b: SchemaObject, pointer: string): Reason[] {
    switch (type) {
      case 'string':
        return [
          ...lowerBound(a, b, 'minLength', pointer),
          ...upperBound(a, b, 'maxLength', pointer),
          ...sameWhenSet(a, b, 'pattern', pointer),
          ...sameWhenSet(a, b, 'format', pointer),
        ];
      case 'number':
      case 'integer':
        return [...numericBounds(a, b, pointer), ...multipleOfReasons(a, b, pointer)];
      case 'array':
        return [
          ...lowerBound(a, b, 'minItems', pointer),
          ...upperBound(a, b, 'maxItems', pointer),
          ...(b['uniqueItems'] === true && a['uniqueItems'] !== true
            ? [reason(pointer, 'bound-tightened', 'items must be unique now')]
            : []),
          ...this.itemReasons(a, b, pointer),
        ];
      case 'object':
        return this.objectReasons(a, b, pointer);
      default:
        return [];
    }
  }

  private itemReasons(a: SchemaObject, b: SchemaObject, pointer: string): Reason[] {
    if (Array.isArray(a['items']) || Array.isArray(b['items'])) {
      return deepEqual(a['items'] as JsonValue, b['items'] as JsonValue)
        ? []
        : [reason(pointer, 'unsupported-keyword', 'tuple "items" changed: treated as incompatible')];
    }
    return this.reasons(a['items'] ?? true, b['items'] ?? true, `${pointer}/*`);
  }

  private objectReasons(a: SchemaObject, b: SchemaObject, pointer: string): Reason[] {
    const reasons: Reason[] = [
      ...lowerBound(a, b, 'minProperties', pointer),
      ...upperBound(a, b, 'maxProperties', pointer),
    ];
    const requiredA = new Set(stringList(a['required']));
    const propertiesA = (isObject(a['properties']) ? a['properties'] : {}) as Record<string, unknown>;
    const propertiesB = (isObject(b['properties']) ? b['properties'] : {}) as Record<string, unknown>;
    const additionalA = a['additionalProperties'] ?? true;
    const additionalB = b['additionalProperties'] ?? true;
    for (const name of stringList(b['required'])) {
      if (!requiredA.has(name))
        reasons.push(reason(`${pointer}/${escape(name)}`, 'required-added', `"${name}" is required now`));
    }
    for (const name of new Set([...Object.keys(propertiesA), ...Object.keys(propertiesB)])) {
      const inA = Object.hasOwn(propertiesA, name) ? propertiesA[name] : additionalA;
      const inB = Object.hasOwn(propertiesB, name) ? propertiesB[name] : additionalB;
      const found = this.reasons(inA, inB, `${pointer}/${escape(name)}`);
      if (found.length > 0 && !Object.hasOwn(propertiesA, name)) {
        reasons.push(
          reason(
            `${pointer}/${escape(name)}`,
            'property-constrained',
            `"${name}" was an undeclared member, free to hold any value; now it is declared`,
          ),
        );
      } else if (found.length > 0 && !Object.hasOwn(propertiesB, name)) {
        reasons.push(
          reason(
            `${pointer}/${escape(name)}`,
            'property-removed',
            `"${name}" is not declared any more, and undeclared members are restricted`,
          ),
        );
      } else {
        reasons.push(...found);
      }
    }
    const additional = this.reasons(additionalA, additionalB, `${pointer}/{additional}`);
    if (additional.length > 0)
      reasons.push(
        reason(`${pointer}/{additional}`, 'additional-properties-closed', 'undeclared members are restricted now'),
      );
    return reasons;
  }
}

/** Whether a `$ref` appears anywhere below: equal text with references may still point at different schemas in the two documents. */
function hasRef(schema: unknown, seen = new Set<object>()): boolean {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return false;
  seen.add(schema);
  if (isObject(schema) && typeof schema['$ref'] === 'string') return true;
  return Object.values(schema).some((value) => hasRef(value, seen));
}

function onlyKeywords(schema: SchemaObject, allowed: readonly string[]): boolean {
  return Object.keys(schema).every(
    (keyword) => allowed.includes(keyword) || ANNOTATIONS.has(keyword) || keyword.startsWith('x-'),
  );
}

function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
