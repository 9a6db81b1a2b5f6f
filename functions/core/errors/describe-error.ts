/** An error's message alone, for a log field. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An error as log fields: its name, message and stack, never its own properties (which may hold input). */
export function describeError(error: unknown): { name: string; message: string; stack?: string | undefined } {
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack || undefined };
  return { name: 'NonError', message: String(error) };
}
