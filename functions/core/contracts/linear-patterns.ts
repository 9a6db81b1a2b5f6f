/**
 * The regular expressions of partner schemas (`pattern`, `patternProperties`), run by RE2
 * (re2js) instead of the JavaScript engine (issue 28, item 6). V8's engine backtracks: `^(a+)+$`
 * against 28 characters took 1.8 s, doubling with each one, and stalled every request of the
 * container meanwhile. RE2 matches in time linear in the input, and so cannot run back-references
 * or look-arounds: a pattern that needs them is refused when the contract is published.
 *
 * The pattern is written in ECMA-262 syntax (JSON Schema's dialect); `translateRegExp` turns what
 * RE2 writes differently (`\uXXXX`, named groups) into RE2's syntax. Where the two still differ
 * (`\s` is ASCII whitespace in RE2, Unicode whitespace in JavaScript) RE2's meaning holds.
 */
import { RE2JS } from 're2js';

export interface LinearPattern {
  test(text: string): boolean;
  /** Ajv keys its compiled patterns by this: one per source. */
  toString(): string;
}

/** The pattern, compiled by RE2; throws (re2js' syntax error) when RE2 cannot run it. */
export function linearPattern(source: string): LinearPattern {
  const compiled = RE2JS.compile(RE2JS.translateRegExp(source));
  return { test: (text) => compiled.matcher(text).find(), toString: () => `/${source}/re2` };
}

/** Why RE2 cannot run `source`, or undefined when it can. */
export function unrunnablePattern(source: string): string | undefined {
  try {
    linearPattern(source);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Ajv's `code.regExp`: every pattern of a compiled schema through RE2. `code` names it in standalone code, which Koerier does not generate. */
export const linearRegExpEngine = Object.assign((source: string) => linearPattern(source), { code: 'linearPattern' });

/** Values, not schemas: a `pattern` member in them is data. */
const VALUE_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);

/** Where a schema holds a regular expression: each `pattern` value and `patternProperties` key, with its JSON Pointer. Walked without recursion. */
export function patternsOf(schema: unknown): { pointer: string; source: string }[] {
  const found: { pointer: string; source: string }[] = [];
  const pending: [value: unknown, pointer: string][] = [[schema, '']];
  while (pending.length > 0) {
    const [value, pointer] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, member] of Object.entries(value)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!Array.isArray(value) && key === 'pattern' && typeof member === 'string')
        found.push({ pointer: at, source: member });
      if (
        !Array.isArray(value) &&
        key === 'patternProperties' &&
        typeof member === 'object' &&
        member !== null &&
        !Array.isArray(member)
      ) {
        for (const name of Object.keys(member))
          found.push({ pointer: `${at}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, source: name });
      }
      if (Array.isArray(value) || !VALUE_KEYWORDS.has(key)) pending.push([member, at]);
    }
  }
  return found;
}
