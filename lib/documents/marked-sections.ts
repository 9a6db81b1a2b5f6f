/**
 * The parts of a markdown document a generator owns (issue 31 items 2 and 3): the lines between
 * `<!-- name:start -->` and `<!-- name:end -->`. The rest of the document stays prose written by
 * hand; the tests compare each part with what its generator makes now.
 */

const markers = (name: string) => ({ start: `<!-- ${name}:start -->\n`, end: `<!-- ${name}:end -->` });

/** The text between the markers (without them), or a thrown error naming the missing section. */
export function markedSection(document: string, name: string): string {
  const { start, end } = markers(name);
  const from = document.indexOf(start);
  const to = document.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`no section "${name}" (${start.trim()} … ${end})`);
  return document.slice(from + start.length, to);
}

/** `document` with the section `name` holding `content` (which ends with a newline). */
export function withMarkedSection(document: string, name: string, content: string): string {
  const { start } = markers(name);
  const old = markedSection(document, name);
  const from = document.indexOf(start) + start.length;
  return document.slice(0, from) + content + document.slice(from + old.length);
}
