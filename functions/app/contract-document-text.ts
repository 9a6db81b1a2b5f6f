/**
 * Reading a published contract document's text as the media type it was published in says (issue
 * 14 item 2), before either ecosystem's parser sees it: JSON with JSON.parse, YAML with the `yaml`
 * library. The parsers then get JSON text, so the one YAML reader that guards against alias bombs
 * is the only one: `maxAliasCount` refuses a document whose aliases expand exponentially ("billion
 * laughs"), and the expanded document may not be much larger than its text.
 *
 * A YAML document keeps its source map, so that a finding the parser reports at a JSON Pointer can
 * name the line it is on.
 */
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { DocumentSyntax } from '../core/contracts/document-media-types.js';
import type { ParserFinding } from '../core/contracts/ports.js';

/** The most alias expansions a YAML document may make (the `yaml` library's own default). */
export const MAX_YAML_ALIASES = 100;
/** Expanded, a YAML document may take at most this many times its text (plus a floor), as JSON. */
const MAX_EXPANSION = 10;
const EXPANSION_FLOOR_BYTES = 1024 * 1024;

export type DocumentText =
  | {
      readonly ok: true;
      readonly value: unknown;
      readonly json: string;
      readonly lineOf: (pointer: string | undefined) => number | undefined;
    }
  | { readonly ok: false; readonly errors: readonly ParserFinding[] };

export function readDocumentText(text: string, syntax: DocumentSyntax): DocumentText {
  return syntax === 'json' ? readJson(text) : readYaml(text);
}

function readJson(text: string): DocumentText {
  try {
    const value: unknown = JSON.parse(text);
    return { ok: true, value, json: text, lineOf: () => undefined };
  } catch (error) {
    return {
      ok: false,
      errors: [
        {
          message: `not JSON (${(error as Error).message}); a YAML document is published with a YAML media type`,
          severity: 'error',
        },
      ],
    };
  }
}

function readYaml(text: string): DocumentText {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    return {
      ok: false,
      errors: document.errors.slice(0, 20).map((error) => {
        const at = error.linePos?.[0];
        // prettyErrors appends the position and a code frame; the finding says the position itself.
        const message = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
        return at
          ? {
              message: `YAML line ${at.line}, column ${at.col}: ${message} (${error.code})`,
              line: at.line,
              severity: 'error' as const,
            }
          : { message: `YAML: ${message} (${error.code})`, severity: 'error' as const };
      }),
    };
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    return {
      ok: false,
      errors: [
        {
          message: `YAML aliases expand too far (${error.message}); write the document out without anchors`,
          severity: 'error',
        },
      ],
    };
  }
  const json = JSON.stringify(value) ?? 'null';
  if (Buffer.byteLength(json) > Math.max(EXPANSION_FLOOR_BYTES, MAX_EXPANSION * Buffer.byteLength(text))) {
    return {
      ok: false,
      errors: [
        {
          message: `YAML aliases expand the document more than ${MAX_EXPANSION} times; write it out without anchors`,
          severity: 'error',
        },
      ],
    };
  }
  return { ok: true, value, json, lineOf: (pointer) => lineOf(document, lineCounter, pointer) };
}

/** The line of the node at `pointer`, or of the nearest node above it that exists. */
function lineOf(document: Document, lineCounter: LineCounter, pointer: string | undefined): number | undefined {
  if (pointer === undefined) return undefined;
  const path =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (let length = path.length; length >= 0; length--) {
    const node: unknown = length === 0 ? document.contents : document.getIn(path.slice(0, length), true);
    if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return undefined;
}
