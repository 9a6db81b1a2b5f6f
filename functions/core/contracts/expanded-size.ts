/**
 * How large a contract document becomes when its `$ref`s are replaced by what they point at, as
 * the parsers do and as a message's payload schema is stored (issue 28, item 6). A 2.3 KB
 * document whose schemas each refer to the one before twice grows to millions of nodes: the
 * parsers took 24 s over it, a 3.9 MB schema was stored, and the ingest then took 17 s to compile
 * it. Measured here without expanding anything: each object's size is counted once and added up
 * wherever it is referred to, so the cost is linear in the document, whatever it would grow to.
 */
import type { ContractKind } from './contract.js';

export interface ExpandedSize {
  /** Objects, arrays and values. */
  readonly nodes: number;
  /** About its length as JSON. */
  readonly bytes: number;
}

/**
 * What each kind's parser is given, with every `$ref` resolved. Koerier's own OpenAPI document is
 * about 63,000 nodes and 1.9 MB so, which the OpenAPI parser reads in under half a second. The
 * AsyncAPI parser's time grows faster than the document: on two loaded cores 24,000 nodes took
 * 7 s, 36,000 took 11 s and 88,000 took 108 s.
 */
export const DOCUMENT_CAP: Readonly<Record<ContractKind, ExpandedSize>> = {
  'openapi-webhook': { nodes: 100_000, bytes: 4 * 1024 * 1024 },
  'asyncapi-data': { nodes: 25_000, bytes: 1024 * 1024 },
};
/** One message's payload schema, as stored and as the ingest compiles it: real ones are a few hundred nodes. */
export const PAYLOAD_CAP: ExpandedSize = { nodes: 20_000, bytes: 512 * 1024 };

interface Frame {
  readonly node: object;
  readonly children: readonly unknown[];
  readonly bytes: number;
  /** The next child to look at. */
  cursor: number;
}

/**
 * The size of `document` with its local `$ref`s (`#/…`) resolved. A reference into itself (a
 * recursive schema, which a parser keeps as a cycle) counts as one node; one that resolves to
 * nothing counts as its own text. Walked without recursion, so a long chain of references costs
 * no stack.
 */
export function expandedSize(document: unknown): ExpandedSize {
  const sizes = new Map<object, ExpandedSize>();
  const open = new Set<object>();
  const sizeOf = (value: unknown): ExpandedSize => {
    if (typeof value === 'object' && value !== null) return sizes.get(value) ?? { nodes: 1, bytes: 1 };
    return { nodes: 1, bytes: typeof value === 'string' ? value.length + 2 : String(value).length };
  };
  if (typeof document !== 'object' || document === null) return sizeOf(document);
  const stack: Frame[] = [frameOf(document, document)];
  open.add(document);
  while (stack.length > 0) {
    const frame = stack.at(-1)!;
    if (frame.cursor < frame.children.length) {
      const child = frame.children[frame.cursor++];
      if (typeof child === 'object' && child !== null && !sizes.has(child) && !open.has(child)) {
        open.add(child);
        stack.push(frameOf(child, document));
      }
      continue;
    }
    stack.pop();
    open.delete(frame.node);
    let nodes = 1;
    let bytes = frame.bytes;
    for (const child of frame.children) {
      const size = sizeOf(child);
      nodes += size.nodes;
      bytes += size.bytes;
    }
    sizes.set(frame.node, { nodes, bytes });
  }
  return sizes.get(document)!;
}

/** Undefined when `value` stays within `cap` with its `$ref`s resolved; else why not, naming the cap. `what` is what it is (`the document`). */
export function expansionRefusal(value: unknown, cap: ExpandedSize, what: string): string | undefined {
  const size = expandedSize(value);
  if (size.nodes <= cap.nodes && size.bytes <= cap.bytes) return undefined;
  const grows = size.nodes > cap.nodes ? `${readable(size.nodes)} nodes` : `about ${readable(size.bytes)} bytes`;
  return `${what} grows to ${grows} with its $refs resolved: the cap is ${cap.nodes} nodes and ${cap.bytes} bytes (a schema referred to N times counts N times)`;
}

function readable(count: number): string {
  return Number.isFinite(count) && count < 1e15 ? String(Math.round(count)) : 'more than 10^15';
}

/**
 * An object's children, with a `$ref` member replaced by its target: the expanded document's
 * children. Its own bytes are the braces, the member names and the separators.
 */
function frameOf(node: object, document: object): Frame {
  if (Array.isArray(node)) return { node, children: node, bytes: 1 + node.length, cursor: 0 };
  const children: unknown[] = [];
  let bytes = 1;
  for (const [key, member] of Object.entries(node)) {
    bytes += key.length + 4;
    const target = key === '$ref' && typeof member === 'string' ? localTarget(document, member) : undefined;
    children.push(target ?? member);
  }
  return { node, children, bytes, cursor: 0 };
}

function localTarget(document: object, ref: string): object | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = document;
  for (const part of ref.slice(1).split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    let key: string;
    try {
      key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
  }
  return typeof node === 'object' && node !== null ? node : undefined;
}
