/** Reading one environment record, collecting every problem so a bad configuration is reported whole. */
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export class SettingsReader {
  readonly issues: string[] = [];

  constructor(readonly env: Env) {}

  /** The trimmed value, or undefined when unset or blank. */
  text(name: string): string | undefined {
    return this.env[name]?.trim() || undefined;
  }

  required(name: string): string {
    const value = this.text(name);
    if (!value) this.issues.push(`${name} is required`);
    return value ?? '';
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.text(name);
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.issues.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return value;
  }

  list(name: string): string[] {
    return list(this.env[name]);
  }

  /** Throws one ConfigError naming every problem found. */
  check(): void {
    if (this.issues.length > 0) throw new ConfigError(`Koerier configuration is invalid: ${this.issues.join('; ')}`);
  }
}

export function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
