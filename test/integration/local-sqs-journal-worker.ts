/**
 * Starts the laptop emulators on the state directory named in argv[2], sends the messages the
 * journal test asks for (argv[3], a JSON list of bodies) to the inbound queue, prints `sent` and
 * then waits to be killed with SIGKILL — no clean stop, no final snapshot.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startEmulators } from '../../local/emulators.js';
import { resourceEnv } from '../../functions/config/resources.js';

const [stateDir, bodies] = process.argv.slice(2);
const emulators = await startEmulators({ stateDir: stateDir! });
const sqs = new SQSClient(emulators.clientSettings('sqs'));
for (const body of JSON.parse(bodies!) as string[]) {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: emulators.resourceEnvironment[resourceEnv.queueUrl('inbound')],
      MessageBody: body,
    }),
  );
}
process.stdout.write('sent\n');
setInterval(() => undefined, 60_000);
