/**
 * JSON given as CDK context (issue 31 item 2): an object in cdk.json arrives as an object, and
 * `-c key='{...}'` as its text. Text that does not parse is reported as invalid JSON with where it
 * goes wrong, never as a missing setting. Node 20's JSON.parse names no position for most
 * mistakes, so a small scanner finds it.
 */

export type JsonSetting = { readonly value: unknown } | { readonly invalid: string };

/** Parses `raw` when it is text; any other value (from cdk.json) is taken as it is. */
export function readJsonSetting(key: string, raw: unknown, example: string): JsonSetting {
  if (typeof raw !== 'string') return { value: raw };
  try {
    return { value: JSON.parse(raw) as unknown };
  } catch {
    return { invalid: `${key} is not valid JSON: ${jsonSyntaxProblem(raw)}; e.g. -c ${key}='${example}'` };
  }
}

/** Where and why `text` is not JSON, e.g. "a property name in double quotes expected at line 1, column 2". */
export function jsonSyntaxProblem(text: string): string {
  const failure = scanJson(text);
  if (failure === undefined) return 'it does not parse';
  const before = text.slice(0, failure.at);
  const line = before.split('\n').length;
  const column = failure.at - before.lastIndexOf('\n');
  const found = failure.at >= text.length ? 'the end of the text' : JSON.stringify(text[failure.at]);
  // Unquoted names are what a shell leaves of `{"a":1}` passed without single quotes around it.
  const shell =
    failure.expected === 'a property name in double quotes' && /[A-Za-z_$]/.test(text[failure.at] ?? '')
      ? ' (did the shell remove the double quotes? put the whole value in single quotes)'
      : '';
  return `${failure.expected} expected at line ${line}, column ${column} (character ${failure.at + 1}), found ${found}${shell}`;
}

interface ScanFailure {
  readonly at: number;
  readonly expected: string;
}

class JsonScanError extends Error {
  constructor(readonly failure: ScanFailure) {
    super(failure.expected);
  }
}

/** The first syntax error in `text` (RFC 8259), or undefined when it is JSON. */
function scanJson(text: string): ScanFailure | undefined {
  let at = 0;
  const fail = (expected: string): never => {
    throw new JsonScanError({ at, expected });
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, at)) at += word.length;
    else fail('a JSON value');
  };
  const string = () => {
    at++; // the opening quote
    while (at < text.length && text[at] !== '"') {
      if (text[at]! < ' ') fail('a character allowed in a string (control characters must be escaped)');
      if (text[at] === '\\') {
        at++;
        if (text[at] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5))) at += 4;
        else if (at >= text.length || !'"\\/bfnrt'.includes(text[at]!)) fail('an escape such as \\" or \\n');
      }
      at++;
    }
    if (at >= text.length) fail('the closing double quote of a string');
    at++;
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(at));
    if (!match) fail('a JSON value');
    at += match![0].length;
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === '{') return object();
    if (char === '[') return array();
    if (char === '"') return string();
    if (char === 't') return literal('true');
    if (char === 'f') return literal('false');
    if (char === 'n') return literal('null');
    if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) return number();
    fail('a JSON value');
  };
  const object = () => {
    at++;
    space();
    if (text[at] === '}') return void at++;
    for (;;) {
      space();
      if (text[at] !== '"') fail('a property name in double quotes');
      string();
      space();
      if (text[at] !== ':') fail("':' after the property name");
      at++;
      value();
      space();
      if (text[at] === ',') at++;
      else if (text[at] === '}') return void at++;
      else fail("',' or '}' after a property value");
    }
  };
  const array = () => {
    at++;
    space();
    if (text[at] === ']') return void at++;
    for (;;) {
      value();
      space();
      if (text[at] === ',') at++;
      else if (text[at] === ']') return void at++;
      else fail("',' or ']' after an element");
    }
  };
  try {
    value();
    space();
    if (at < text.length) fail('the end of the text');
    return undefined;
  } catch (error) {
    if (error instanceof JsonScanError) return error.failure;
    throw error;
  }
}
