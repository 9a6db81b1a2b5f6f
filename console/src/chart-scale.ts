// The chart's arithmetic, kept apart from the DOM so that unit tests under Node can import it.

/** 1, 2 or 5 times a power of ten, at least `value`: a scale whose half is a round number too. */
export function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}
