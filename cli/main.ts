/**
 * The entry of the `koerier` command (cli/koerier.mjs loads it): runs the program on the
 * arguments and ends with its exit code (cli/exit-codes.ts).
 */
import { run } from './program.js';

// Piped into `head` or a closed terminal: the reader went away, nothing left to say.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});
process.exitCode = await run(process.argv.slice(2));
