/**
 * Stack traces that name the TypeScript sources, paid for when a stack is first formatted rather
 * than at every cold start. `node --enable-source-maps` reads and parses the bundle's source map
 * while the bundle is imported (6–20 ms of every cold start, bench/results/bundles.json), and
 * decodes its mappings at the first stack all the same; a Lambda function formats a stack only
 * when something fails, so this hook reads, parses and decodes the map then, once.
 *
 * Importing this module installs an `Error.prepareStackTrace` that formats a stack as Node does —
 * Node's own header, then `\n    at <frame>` per frame V8 captured (so `Error.stackTraceLimit`
 * holds) — with each frame in this bundle given its original file, line and column, and the
 * original name where the minifier renamed the function. Frames elsewhere (node:internal, other
 * files) are V8's own, and so are those of a bundle file without a readable map. On any other
 * failure while mapping, the stack is Node's own: an error while describing an error must not hide it.
 *
 * It installs only when running from a bundle: the sources are `.ts`, esbuild writes a `.mjs`, and
 * `import.meta.url` is the file that holds this code, so a `.mjs` URL is part of the bundle. The
 * bundle is `index.mjs` and the chunks esbuild split off beside it (lib/bundling.ts), each with its
 * own `<file>.map`: a frame in any `.mjs` of that directory is mapped through its own file's map,
 * read when a stack first passes through that file. Under tsx or vitest the URL is
 * the `.ts` file and the module does nothing, which leaves their own source-map support alone; so
 * does a process that already maps stacks (`--enable-source-maps`).
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

type PrepareStackTrace = (error: Error, trace: NodeJS.CallSite[]) => unknown;

/** What the map lookup needs of one file of the bundle: its map, and its lines to find a renamed function's name in. */
interface LoadedMap {
  readonly map: SourceMap;
  readonly lines: readonly string[];
}

export function installSourceMappedStacks(moduleUrl: string): void {
  // Node's own formatter, which Node 20 and later put there: it writes Node's error headers (`RangeError [ERR_…]: …`), which V8's API does not give.
  const nodeFormat =
    typeof Error.prepareStackTrace === 'function' ? (Error.prepareStackTrace as PrepareStackTrace) : undefined;
  const bundleDirectory = new URL('.', moduleUrl).href;
  const inBundle = (file: string | null): file is string =>
    file !== null &&
    file.startsWith(bundleDirectory) &&
    file.endsWith('.mjs') &&
    !file.slice(bundleDirectory.length).includes('/');
  // Per file of the bundle. Absent: not read yet; null: unreadable, or being read (a stack formatted while reading gets Node's own).
  const loaded = new Map<string, LoadedMap | null>();

  const mapOf = (fileUrl: string): LoadedMap | null => {
    const known = loaded.get(fileUrl);
    if (known !== undefined) return known;
    loaded.set(fileUrl, null);
    const filePath = fileURLToPath(fileUrl);
    const map = new SourceMap(
      JSON.parse(readFileSync(`${filePath}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0],
    );
    const read = { map, lines: readFileSync(filePath, 'utf8').split('\n') };
    loaded.set(fileUrl, read);
    return read;
  };

  const plain = (error: Error, trace: NodeJS.CallSite[]): unknown =>
    nodeFormat
      ? nodeFormat(error, trace)
      : [Error.prototype.toString.call(error), ...trace.map(String)].join('\n    at ');

  /** A frame of the bundle mapped through its file's map; any other frame, or one whose map cannot be read, as V8 writes it. */
  const frame = (site: NodeJS.CallSite): string => {
    const file = site.getFileName();
    if (!inBundle(file)) return String(site);
    let fileMap: LoadedMap | null;
    try {
      fileMap = mapOf(file);
    } catch {
      fileMap = null;
    }
    return fileMap === null ? String(site) : mappedFrame(site, fileMap, file);
  };

  Error.prepareStackTrace = (error: Error, trace: NodeJS.CallSite[]): unknown => {
    try {
      if (!trace.some((site) => inBundle(site.getFileName()))) return plain(error, trace);
      const header = nodeFormat ? String(nodeFormat(error, [])) : Error.prototype.toString.call(error);
      return header + trace.map((site) => `\n    at ${frame(site)}`).join('');
    } catch {
      return plain(error, trace);
    }
  };
}

/** One frame of a bundle file as V8 writes it, with the original location and, where the minifier renamed the function, its original name. */
function mappedFrame(site: NodeJS.CallSite, { map, lines }: LoadedMap, fileUrl: string): string {
  const v8Text = String(site);
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (line === null || column === null) return v8Text;
  // CallSite positions are 1-based, the source map's 0-based.
  const entry = map.findEntry(line - 1, column - 1) as Partial<{
    originalSource: string;
    originalLine: number;
    originalColumn: number;
  }>;
  if (entry.originalSource === undefined || entry.originalLine === undefined || entry.originalColumn === undefined)
    return v8Text;
  const original = `${sourcePath(entry.originalSource, fileUrl)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  const generated = `${fileUrl}:${line}:${column}`;
  // V8 writes `<name> (<location>)`, or the location alone (after `async ` perhaps) for an anonymous function.
  if (v8Text.endsWith(` (${generated})`))
    return `${withOriginalName(v8Text.slice(0, -generated.length - 3), site, map, lines)} (${original})`;
  if (v8Text.endsWith(generated)) return v8Text.slice(0, -generated.length) + original;
  return v8Text;
}

/** esbuild writes each source relative to the map; a path reads better in a log than a file URL. */
function sourcePath(source: string, fileUrl: string): string {
  const url = new URL(source, `${fileUrl}.map`);
  return url.protocol === 'file:' ? fileURLToPath(url) : url.href;
}

/**
 * V8 names a function by its minified name (`n`); the map records the original at the renamed
 * identifier. That identifier is found from where the function starts: after `function` in a
 * declaration, before `=` when a variable holds the function, at its class for a constructor.
 * Only an entry exactly at the identifier counts: the entry before some other position may name
 * a different identifier.
 */
function withOriginalName(v8Name: string, site: NodeJS.CallSite, map: SourceMap, lines: readonly string[]): string {
  const name = site.getFunctionName();
  const startLine = site.getEnclosingLineNumber?.();
  const startColumn = site.getEnclosingColumnNumber?.();
  if (!name || !IDENTIFIER.test(name) || startLine == null || startColumn == null) return v8Name;
  const text = lines[startLine - 1] ?? '';
  const start = startColumn - 1;
  const at = nameColumn(text, start, name, site.isConstructor());
  if (at === undefined) return v8Name;
  const entry = map.findEntry(startLine - 1, at) as Partial<{
    generatedLine: number;
    generatedColumn: number;
    name: string;
  }>;
  if (!entry.name || entry.name === name || entry.generatedLine !== startLine - 1 || entry.generatedColumn !== at)
    return v8Name;
  // The function name, not the same letters inside a type name or an `[as method]`.
  return v8Name.replace(new RegExp(`(^|[ .])${name.replace(/\$/g, '\\$')}(?= |$)`), `$1${entry.name}`);
}

/** Where, on the line the function starts on, esbuild wrote the function's name; a constructor's is its class's, the nearest before it. */
function nameColumn(text: string, start: number, name: string, isConstructor: boolean): number | undefined {
  if (isConstructor) {
    const escaped = name.replace(/\$/g, '\\$');
    const classes = text
      .slice(0, start)
      .matchAll(new RegExp(`(?<![\\w$])(?:${escaped}=class|class ${escaped})(?![\\w$])`, 'g'));
    const nearest = [...classes].at(-1);
    if (nearest === undefined) return undefined;
    return nearest[0].startsWith('class ') ? nearest.index + 'class '.length : nearest.index;
  }
  const declared = DECLARATION.exec(text.slice(start, start + name.length + 24));
  if (declared?.[1] === name) return start + declared[0].length - name.length;
  if (start > name.length && text.slice(start - name.length - 1, start) === `${name}=`) return start - name.length - 1;
  return undefined;
}

const IDENTIFIER = /^[\w$]+$/;
/** `function n(`, `async function n(`, `function*n(` as esbuild writes them, minified. */
const DECLARATION = /^(?:async\s*)?function\s*\*?\s*([\w$]+)/;

if (import.meta.url.endsWith('.mjs') && !process.sourceMapsEnabled) installSourceMappedStacks(import.meta.url);
