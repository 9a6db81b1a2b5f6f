import { describe, expect, it } from 'vitest';
import { CESQL_LIMITS, CesqlParseError, compileCesql } from '../../../functions/core/cesql/index.js';

const event = {
  specversion: '1.0',
  id: 'e-1',
  source: 'urn:nld:oin:00000001234567890000:systeem:las',
  type: 'nl.edu.leerling.ingeschreven.v1',
  subject: 'leerling/42',
  schoolcode: '12AB',
  leerjaar: 3,
  vip: true,
};
const value = (text: string, attributes: Record<string, string | number | boolean> = event) =>
  compileCesql(text).evaluate(attributes);
const parseErrorOf = (text: string): CesqlParseError => {
  try {
    compileCesql(text);
  } catch (error) {
    if (error instanceof CesqlParseError) return error;
    throw error;
  }
  throw new Error(`parsed: ${text}`);
};

describe('CESQL-1, issue 32 item 1: CESQL v1 evaluation', () => {
  it('CESQL-1, issue 32 item 1: the filter example of the issue matches the event it describes, and not others', () => {
    const filter = compileCesql(
      "type LIKE 'nl.edu.leerling.%' AND subject <> 'test' AND (EXISTS schoolcode AND schoolcode IN ('12AB', '34CD'))",
    );
    expect(filter.matches(event)).toBe(true);
    expect(filter.matches({ ...event, schoolcode: '99ZZ' })).toBe(false);
    expect(filter.matches({ ...event, type: 'nl.overheid.zaken.zaak.aangemaakt.v1' })).toBe(false);
    const { schoolcode: _dropped, ...withoutSchool } = event;
    expect(filter.matches(withoutSchool)).toBe(false);
  });

  it('CESQL-1, issue 32 item 1: an expression that errors, or is not a Boolean, does not match (Subscriptions API 3.2.4.1.2)', () => {
    expect(compileCesql('NOT (missing = 1)').evaluate(event)).toEqual({ value: false, error: 'missingAttribute' });
    expect(compileCesql('NOT (missing = 1)').matches(event)).toBe(false);
    expect(compileCesql("'true'").matches(event)).toBe(false);
    expect(compileCesql('1').matches(event)).toBe(false);
    expect(compileCesql('leerjaar / 0 = 0').matches(event)).toBe(false);
    expect(compileCesql('leerjaar = 3 AND vip').matches(event)).toBe(true);
  });

  it('CESQL-1, issue 32 item 1: precedence is the spec s: NOT binds tighter than comparison, * than +, LIKE than +', () => {
    expect(value("NOT 'true' = false").value).toBe(true);
    expect(value('1 + 2 * 3 = 7').value).toBe(true);
    expect(value('10 - 4 - 3').value).toBe(3);
    expect(value("1 + 2 LIKE '2'").value).toBe(2);
  });

  it('CESQL-1, issue 32 item 1: a mix of AND, OR and XOR without parentheses is refused, naming the place and the fix', () => {
    const error = parseErrorOf("type = 'a' OR type = 'b' AND subject = 'c'");
    expect(error.position).toBe(25);
    expect(error.message).toContain('at position 26: expected OR or parentheses');
    expect(value("type = 'a' OR (type = 'b' AND subject = 'c')").value).toBe(false);
    expect(value("(type = 'a' OR subject = 'leerling/42') AND vip").value).toBe(true);
    expect(value('TRUE AND TRUE AND FALSE').value).toBe(false);
  });

  it('CESQL-1, issue 32 item 1: parse errors name the position and what was expected', () => {
    expect(parseErrorOf('type LIKE 123')).toMatchObject({
      position: 10,
      expected: 'a string literal as the LIKE pattern',
    });
    expect(parseErrorOf("type = 'abc")).toMatchObject({ position: 11 });
    expect(parseErrorOf('(type = subject')).toMatchObject({ position: 15, found: 'the end of the expression' });
    expect(parseErrorOf('type IN ()')).toMatchObject({ expected: 'at least one value in the IN set' });
    expect(parseErrorOf('type NOT = 1')).toMatchObject({ position: 9, expected: 'LIKE or IN after NOT' });
    expect(parseErrorOf('my_ext = 1')).toMatchObject({ position: 0 });
    expect(parseErrorOf('2147483648')).toMatchObject({ expected: 'an integer from -2147483648 to 2147483647' });
  });

  it('CESQL-1, issue 32 item 1: Koerier s bounds: 4 KB of text and 32 levels of nesting', () => {
    const long = `type = '${'x'.repeat(CESQL_LIMITS.maxBytes)}'`;
    expect(parseErrorOf(long).expected).toBe('at most 4096 bytes of expression');
    expect(parseErrorOf(`'${'é'.repeat(2048)}' = type`).expected).toBe('at most 4096 bytes of expression');
    const nested = (depth: number) => `${'('.repeat(depth)}TRUE${')'.repeat(depth)}`;
    expect(value(nested(32)).value).toBe(true);
    expect(parseErrorOf(nested(33)).expected).toBe('at most 32 levels of nesting');
    expect(parseErrorOf(`${'NOT '.repeat(33)}TRUE`).expected).toBe('at most 32 levels of nesting');
  });

  it('CESQL-1, issue 32 item 1: integers are 32-bit: literals in range, overflow saturates with a MathError', () => {
    expect(value('-2147483648').value).toBe(-2147483648);
    expect(value('2147483647 + 1')).toEqual({ value: 2147483647, error: 'math' });
    expect(value('-2147483647 - 2')).toEqual({ value: -2147483648, error: 'math' });
    expect(value('65536 * 65536')).toEqual({ value: 2147483647, error: 'math' });
    expect(value('-7 / 2').value).toBe(-3);
    expect(value('-7 % 2').value).toBe(-1);
    expect(value("INT('2147483648')")).toEqual({ value: 0, error: 'cast' });
    expect(value('leerjaar + 1', { ...event, leerjaar: 2 ** 40 })).toEqual({ value: 1, error: 'cast' });
  });

  it('CESQL-1, issue 32 item 1: characters are code points in LENGTH, SUBSTRING and LIKE s _', () => {
    expect(value("LENGTH('😀é')").value).toBe(2);
    expect(value("SUBSTRING('a😀b', 2, 1)").value).toBe('😀');
    expect(value("'😀x' LIKE '_x'").value).toBe(true);
    expect(value("'😀x' LIKE '__x'").value).toBe(false);
    expect(value("TRIM('\u00a0\u3000 a \u2003')").value).toBe('a');
  });

  it('CESQL-1, issue 32 item 1: calls no built-in answers are listed at compile time and raise MissingFunctionError', () => {
    const compiled = compileCesql("LENGTH(type) > 3 AND NOPE(type) AND LEFT('a')");
    expect(compiled.unknownFunctions).toEqual([
      { name: 'NOPE', arity: 1, at: 21 },
      { name: 'LEFT', arity: 1, at: 36 },
    ]);
    expect(compiled.evaluate(event)).toEqual({ value: false, error: 'missingFunction' });
  });
});

describe('CESQL-1, issue 32 item 1: LIKE is linear', () => {
  const reference = (pattern: string) =>
    new RegExp(
      `^${[...pattern].map((c) => (c === '%' ? '[^]*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`,
      'u',
    );

  it('CESQL-1, issue 32 item 1: LIKE agrees with a regular-expression reference on random values and patterns', () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const pick = (alphabet: string, length: number) =>
      Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');
    for (let i = 0; i < 3000; i++) {
      const pattern = pick('ab%_.', 1 + random(7));
      const candidate = pick('ab.', random(9));
      const expected = reference(pattern).test(candidate);
      expect([pattern, candidate, value(`'${candidate}' LIKE '${pattern}'`).value]).toEqual([
        pattern,
        candidate,
        expected,
      ]);
    }
  });

  it('CESQL-1, issue 32 item 1: a pattern that makes a backtracking matcher exponential answers at once', () => {
    const pattern = `${'%a'.repeat(40)}%b`;
    const compiled = compileCesql(`subject LIKE '${pattern}'`);
    const subject = 'a'.repeat(3000);
    const started = performance.now();
    const unanchored = compileCesql(`subject LIKE '${'%a_'.repeat(40)}%c%'`);
    for (let i = 0; i < 10; i++) {
      expect(compiled.evaluate({ ...event, subject }).value).toBe(false);
      expect(unanchored.evaluate({ ...event, subject }).value).toBe(false);
    }
    expect(performance.now() - started).toBeLessThan(500);
  });
});
