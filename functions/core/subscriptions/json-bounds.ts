/**
 * Bounds on the JSON the subscriptions API reads, checked on the text before it is parsed or
 * walked (review item 9): `JSON.parse` itself copes with any nesting, but everything that walks
 * the result recursively (the merge patch, `JSON.stringify`) would exhaust the stack on 100,000
 * levels and answer 500. One linear pass over the text, no recursion, no backtracking.
 */

/** A subscription nests far less: filters at most 8 levels, each an object in an array. */
export const MAX_JSON_DEPTH = 32;
/** A subscription is a few kilobytes; a body this large is not one. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** The deepest nesting of objects and arrays in `text`, counted up to `limit + 1` at most. */
export function jsonNestingDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
