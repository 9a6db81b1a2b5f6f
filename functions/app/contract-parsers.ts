/**
 * The contract register's parsers (EDU-21, issue 14 item 2): the AsyncAPI initiative's
 * @asyncapi/parser for AsyncAPI 3.x, @readme/openapi-parser for OpenAPI 3.x. Only the register's
 * function imports this module, so only its bundle carries them.
 *
 * Neither may follow an external `$ref`: a published document is untrusted input, and a reference
 * to `http://169.254.169.254/…` or `file:///etc/passwd` would make the register fetch it. The
 * AsyncAPI parser gets resolvers for http, https and file that refuse; the OpenAPI parser runs
 * with external resolution off and is never handed a string (which it would read as a path or URL).
 * Both get the document as JSON, read first by ./contract-document-text.ts as its media type says.
 *
 * Issue 28, item 6: neither gets a document that grows past the register's cap when its `$ref`s
 * are resolved (../core/contracts/expanded-size.ts); both dereference, and the AsyncAPI parser's
 * time grows with the expanded document. Issue 36, item 1: an OpenAPI 3.2 document is checked by
 * ./openapi-32.ts, and whatever a parser throws is a finding (a 400), never a 500.
 */
import { Parser, type Diagnostic } from '@asyncapi/parser';
import { validate } from '@readme/openapi-parser';
import { DOCUMENT_CAP, expansionRefusal } from '../core/contracts/expanded-size.js';
import type { JsonSchema } from '../core/contracts/schema-compatibility.js';
import type { ContractKind } from '../core/contracts/contract.js';
import type { ContractParser, ParsedContract, ParserFinding } from '../core/contracts/ports.js';
import { readDocumentText } from './contract-document-text.js';
import { parseOpenApi32 } from './openapi-32.js';

const MAX_FINDINGS = 50;
/** Annotations the AsyncAPI parser adds to every schema it returns. */
const PARSER_ANNOTATION = /^x-parser-/;

export function contractParser(): ContractParser {
  let asyncApi: Parser | undefined;
  return {
    async parse(kind, text, syntax) {
      const read = readDocumentText(text, syntax);
      if (!read.ok) return { valid: false, errors: read.errors };
      const tooLarge = expansionRefusal(read.value, DOCUMENT_CAP[kind], 'the document');
      if (tooLarge)
        return { valid: false, errors: [{ message: tooLarge, rule: 'document-expansion-cap', severity: 'error' }] };
      try {
        // The parsers get JSON: a YAML document was read (its aliases bounded) by readDocumentText alone.
        const parsed =
          kind === 'asyncapi-data'
            ? await parseAsyncApi((asyncApi ??= asyncApiParser()), read.value, read.json)
            : await parseOpenApi(read.value);
        return withLines(parsed, read.lineOf);
      } catch (error) {
        return { valid: false, errors: [parserFailure(kind, error)] };
      }
    },
  };
}

/** What a parser threw, as the finding: the document is what made it throw. */
function parserFailure(kind: ContractKind, error: unknown): ParserFinding {
  const parser = kind === 'asyncapi-data' ? 'AsyncAPI' : 'OpenAPI';
  return {
    message: `the ${parser} parser could not read the document: ${firstLine(error instanceof Error ? error.message : String(error))}`,
    severity: 'error',
  };
}

function asyncApiParser(): Parser {
  const refuse = (schema: string) => ({
    schema,
    order: 0,
    canRead: true,
    read: (): Promise<string> =>
      Promise.reject(new Error(`external references (${schema}) are not followed: put the schema in the document`)),
  });
  return new Parser({
    __unstable: { resolver: { cache: false, resolvers: [refuse('http'), refuse('https'), refuse('file')] } },
  });
}

async function parseAsyncApi(parser: Parser, document: unknown, text: string): Promise<ParsedContract> {
  // Refused before parsing: the functions carry the 3.x schemas alone (./asyncapi-3-schemas.ts), so the parser would not know another version.
  const declared =
    typeof document === 'object' && document !== null ? (document as Record<string, unknown>)['asyncapi'] : undefined;
  if (typeof declared === 'string' && !declared.startsWith('3.')) return notAsyncApi3(declared);
  const parsed = await parser.parse(text);
  const diagnostics = parsed.diagnostics;
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 0).map(findingOf('error'));
  if (!parsed.document || errors.length > 0)
    return {
      valid: false,
      errors: bounded(errors.length > 0 ? errors : [{ message: 'not an AsyncAPI document', severity: 'error' }]),
    };
  const specVersion = parsed.document.version();
  if (!specVersion.startsWith('3.')) return notAsyncApi3(specVersion);
  const messages: { id: string; name?: string; payload?: JsonSchema }[] = [];
  for (const message of parsed.document.allMessages()) {
    const payload = message.payload()?.json();
    const name = message.name();
    messages.push({
      id: message.id(),
      ...(name ? { name } : {}),
      ...(payload === undefined ? {} : { payload: withoutParserAnnotations(payload) as JsonSchema }),
    });
  }
  for (const message of messages) {
    // Stored as JSON: a recursive payload (a schema that contains itself) cannot be written out.
    if (message.payload !== undefined && !serialisable(message.payload)) {
      return {
        valid: false,
        errors: [
          { message: `message "${message.id}": recursive payload schemas are not supported`, severity: 'error' },
        ],
      };
    }
  }
  const warnings = diagnostics.filter((diagnostic) => diagnostic.severity === 1).map(findingOf('warning'));
  return { valid: true, specVersion, messages, warnings: bounded(warnings) };
}

function notAsyncApi3(version: string): ParsedContract {
  return {
    valid: false,
    errors: [
      {
        message: `AsyncAPI ${version}: the register takes AsyncAPI 3.x (EDU-21)`,
        path: '/asyncapi',
        severity: 'error',
      },
    ],
  };
}

async function parseOpenApi(document: unknown): Promise<ParsedContract> {
  const version =
    typeof document === 'object' && document !== null ? (document as Record<string, unknown>)['openapi'] : undefined;
  if (typeof version !== 'string' || !/^3\.\d+\.\d+/.test(version)) {
    return {
      valid: false,
      errors: [
        {
          message: 'the register takes OpenAPI 3.x documents (EDU-21): "openapi" must be 3.x.y',
          path: '/openapi',
          severity: 'error',
        },
      ],
    };
  }
  // With external resolution off the parser leaves such a reference unresolved and passes the document, which then does not carry its schemas.
  const external = externalReferences(document);
  if (external.length > 0) return { valid: false, errors: bounded(external) };
  if (version.startsWith('3.2.')) return parseOpenApi32(document as Record<string, unknown>, version);
  // validate() dereferences in place; it gets its own copy.
  const result = await validate(structuredClone(document) as Parameters<typeof validate>[0], {
    resolve: { external: false, file: false },
  });
  if (!result.valid)
    return {
      valid: false,
      errors: bounded(
        result.errors.map((error) => ({ message: firstLine(error.message), severity: 'error' as const })),
      ),
    };
  return {
    valid: true,
    specVersion: version,
    messages: [],
    warnings: bounded(
      result.warnings.map((warning) => ({ message: firstLine(warning.message), severity: 'warning' as const })),
    ),
  };
}

/**
 * Every `$ref` that does not point into the document itself (`#…`): a URL, or a path relative to
 * the document or to a schema's `$id`. Walked without recursion, so a deeply nested document costs
 * no stack; the document is JSON (a tree), read within the register's size limit.
 */
function externalReferences(document: unknown): ParserFinding[] {
  const found: ParserFinding[] = [];
  const pending: [value: unknown, pointer: string][] = [[document, '']];
  while (pending.length > 0 && found.length < MAX_FINDINGS) {
    const [value, pointer] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, member] of Object.entries(value)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key === '$ref' && typeof member === 'string' && !member.startsWith('#')) {
        found.push({
          message: `external reference ${JSON.stringify(member)} is not followed: put the schema in the document`,
          path: at,
          severity: 'error',
        });
      } else pending.push([member, at]);
    }
  }
  return found;
}

/** In a YAML document, each finding at a JSON Pointer also names its line. */
function withLines(
  parsed: ParsedContract,
  lineOf: (pointer: string | undefined) => number | undefined,
): ParsedContract {
  const located = (finding: ParserFinding): ParserFinding => {
    const line = finding.line ?? lineOf(finding.path);
    return line === undefined || finding.line !== undefined
      ? finding
      : { ...finding, message: `${finding.message} (line ${line})`, line };
  };
  return parsed.valid
    ? { ...parsed, warnings: parsed.warnings.map(located) }
    : { valid: false, errors: parsed.errors.map(located) };
}

function findingOf(severity: 'error' | 'warning') {
  return (diagnostic: Diagnostic): ParserFinding => ({
    message: `${diagnostic.code}: ${diagnostic.message}`,
    ...(diagnostic.path.length > 0
      ? { path: `/${diagnostic.path.map((part) => String(part).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}` }
      : {}),
    severity,
  });
}

/** The parser's messages carry a code frame after the first line; the finding is the first line. */
function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}

function bounded(findings: ParserFinding[]): ParserFinding[] {
  return findings.slice(0, MAX_FINDINGS);
}

function withoutParserAnnotations(value: unknown, seen = new Map<object, unknown>()): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return seen.get(value);
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const item of value) copy.push(withoutParserAnnotations(item, seen));
    return copy;
  }
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const [key, member] of Object.entries(value))
    if (!PARSER_ANNOTATION.test(key)) copy[key] = withoutParserAnnotations(member, seen);
  return copy;
}

function serialisable(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}
