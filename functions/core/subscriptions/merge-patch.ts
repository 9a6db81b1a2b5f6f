/** RFC 7396 JSON merge patch, as a PATCH of a subscription applies it (EDU-14, review item 9). */
import { MAX_JSON_DEPTH } from './json-bounds.js';

export class PatchTooDeepError extends Error {
  override name = 'PatchTooDeepError';
}

/**
 * RFC 7396 JSON merge patch: members set to null are removed, objects merge, everything else
 * replaces. The result has no prototype, so a `"__proto__"` member of the patch stays an ordinary
 * (unknown, hence refused) member instead of setting the prototype and hiding from `Object.keys`.
 * Recursion is bounded (review item 9): a patch nesting objects deeper than `maxDepth` throws
 * `PatchTooDeepError` instead of exhausting the stack. Callers check the text first
 * (`jsonNestingDepth`); this is the backstop for values that did not come from text.
 */
export function mergePatch(target: unknown, patch: unknown, maxDepth = MAX_JSON_DEPTH, depth = 1): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  if (depth > maxDepth) throw new PatchTooDeepError(`the merge patch nests deeper than ${maxDepth} levels`);
  const result: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (typeof target === 'object' && target !== null && !Array.isArray(target)) Object.assign(result, target);
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else result[name] = mergePatch(result[name], value, maxDepth, depth + 1);
  }
  return result;
}
