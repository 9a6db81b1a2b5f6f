/** JSON values as parsed documents hold them, and structural equality of two of them. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Equal as JSON: member order does not count; recursive graphs compare by identity below the first repeated pair. */
export function deepEqual(
  a: JsonValue | undefined,
  b: JsonValue | undefined,
  seen = new Map<object, object>(),
): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => deepEqual(item as JsonValue, b[index] as JsonValue, seen));
  }
  const keysA = Object.keys(a);
  if (keysA.length !== Object.keys(b).length) return false;
  const objectB = b as Record<string, JsonValue>;
  return keysA.every(
    (key) => Object.hasOwn(objectB, key) && deepEqual((a as Record<string, JsonValue>)[key], objectB[key], seen),
  );
}
