/** AsyncAPI 3 documents of one message for the contract register's tests (issue 14). */

export const ENROLMENT_TYPE = 'nl.edu.enrolment.created.v1';

/** An AsyncAPI 3.0 document whose message `enrolled` (named after the event type) has `payload` as its schema. */
export function enrolmentContract(payload: Record<string, unknown>, version = '1.0.0'): Record<string, unknown> {
  return {
    asyncapi: '3.0.0',
    info: { title: 'Enrolments', version },
    channels: {
      enrolments: { address: 'enrolments', messages: { enrolled: { $ref: '#/components/messages/enrolled' } } },
    },
    operations: {
      publishEnrolled: {
        action: 'send',
        channel: { $ref: '#/channels/enrolments' },
        messages: [{ $ref: '#/channels/enrolments/messages/enrolled' }],
      },
    },
    components: { messages: { enrolled: { name: ENROLMENT_TYPE, payload } } },
  };
}

export const enrolmentPayload = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'object',
  required: ['student', 'school'],
  properties: {
    student: { type: 'string', minLength: 1 },
    school: { type: 'string', pattern: '^[0-9]{2}[A-Z]{2}$' },
    level: { enum: ['vo', 'mbo', 'hbo'] },
    ...extra,
  },
});

export const owner = {
  name: 'Stichting Onderwijsdata',
  email: 'contracten@example.org',
  url: 'https://example.org/contracten',
};
