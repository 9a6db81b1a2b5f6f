/**
 * Looks a resource up by the name functions/config/resources.ts gives it, failing with a message that says
 * which description refers to the missing name.
 */
export function byName<T>(resources: ReadonlyMap<string, T>, kind: string, name: string, referredToBy: string): T {
  const found = resources.get(name);
  if (found === undefined) {
    const known = [...resources.keys()].join(', ') || 'none';
    throw new Error(
      `${referredToBy} refers to ${kind} '${name}', which functions/config/resources.ts does not describe (known: ${known})`,
    );
  }
  return found;
}
