/**
 * The JSON Schema formats the request body schemas use, given to TypeBox's checker, which checks
 * no format it was not given (it refuses the value instead). Which URLs are allowed is the area's
 * policy, checked in code after the schema; `uri` here is only "a URL".
 */
import { FormatRegistry } from '@sinclair/typebox';

/** RFC 3339 §5.6, as `Date.parse` reads it; the pattern leaves out what Date.parse would also take. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

export const STRING_FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  'date-time': (value) => RFC3339.test(value) && !Number.isNaN(Date.parse(value)),
  uri: (value) => URL.canParse(value),
  // The length first: the pattern backtracks quadratically in it (issue 28 item 6), and RFC 5321 allows 254.
  email: (value) => value.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value),
};

let registered = false;

/** Gives TypeBox the formats, once; called before a check rather than at module load. */
export function registerStringFormats(): void {
  if (registered) return;
  for (const [name, check] of Object.entries(STRING_FORMATS))
    if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, check);
  registered = true;
}
