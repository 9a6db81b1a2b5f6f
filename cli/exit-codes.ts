/**
 * What the `koerier` CLI's exit status means, so scripts can branch on it (documented in the README,
 * "The koerier CLI", and in `koerier --help`).
 */
export const exitCodes = {
  /** Everything asked for was done. */
  ok: 0,
  /** The gateway refused something: an event rejected (400), a conflict (409), a bad request; or a `--exec` command failed. */
  refused: 1,
  /** The command line or the settings are wrong (an unknown option, no gateway URL, no secret). */
  usage: 2,
  /** Authentication or authorisation failed: the token endpoint refused the client, or the gateway answered 401/403. */
  auth: 3,
  /** Not found: an unknown subscription, or a route this gateway does not have (not yet available). */
  notFound: 4,
  /** The gateway could not be reached, or kept answering 5xx/429 until the retries ran out. */
  unavailable: 5,
  /** Done as asked, but the subscription is not active: pending, rejected, retired or suspended (the output says why and what next). */
  inactive: 6,
} as const;

export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

export const EXIT_CODES_HELP = `
Exit codes:
  0  done
  1  refused by the gateway (an event rejected, a conflict), or a --exec command failed
  2  usage: bad arguments or missing settings
  3  authentication or authorisation failed (token endpoint, 401, 403)
  4  not found (an unknown id, or a route this gateway does not have yet)
  5  unavailable: network failure, or 5xx/429 after every retry
  6  a subscription created, updated or revalidated is not active (pending, rejected, ...): the reason and next step are printed`;

/** A failure the CLI reports as one line on stderr, ending the process with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

/** The exit code for an HTTP status the gateway answered with after its retries. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return exitCodes.auth;
  if (status === 404) return exitCodes.notFound;
  if (status === 429 || status >= 500) return exitCodes.unavailable;
  return exitCodes.refused;
}
