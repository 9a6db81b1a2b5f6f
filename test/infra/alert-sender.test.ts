/**
 * Out-of-band alerts in the stack (issue 30 item 3, SELF-3): `koerier:alertSender` reaches the
 * alerts function as its From address, and only the alerts function may `ses:SendEmail`, from that
 * identity (the address or its domain) and no other; without the setting nobody may.
 */
import { describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { logicalId, synthKoerier } from './synth.js';

const SENDER = 'koerier-alerts@gemeente.example';

function grantsOf(context: Record<string, unknown>) {
  const { stack, resources } = synthKoerier({ context });
  const statementsOf = (name: string) => {
    const role = logicalId(stack, stack.functions.get(name)!.role);
    return Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(role))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
  };
  const sesResources = (name: string) =>
    statementsOf(name)
      .filter((s) => [s.Action].flat().some((action) => action.startsWith('ses:')))
      .flatMap((s) => [s.Resource].flat());
  const environmentOf = (name: string) =>
    resources[logicalId(stack, stack.functions.get(name)!.function)]!.Properties.Environment.Variables as Record<
      string,
      unknown
    >;
  return { stack, sesResources, environmentOf };
}

describe('the alert sender (issue 30 item 3)', () => {
  it('SELF-3, issue 30 item 3: only the alerts function may ses:SendEmail, from the identity koerier:alertSender names', () => {
    const { stack, sesResources, environmentOf } = grantsOf({ 'koerier:alertSender': SENDER });
    const granted = JSON.stringify(sesResources('alerts'));
    expect(granted).toContain(`:identity/${SENDER}`);
    expect(granted).toContain(':identity/gemeente.example"');
    expect(sesResources('alerts')).toHaveLength(2);
    expect(granted).not.toContain('*');
    expect(environmentOf('alerts')[settingEnv.alertSender]).toBe(SENDER);
    for (const name of stack.functions.keys()) if (name !== 'alerts') expect(sesResources(name), name).toEqual([]);
  });

  it('SELF-3, issue 30 item 3: without koerier:alertSender no function may send e-mail', () => {
    const { stack, sesResources, environmentOf } = grantsOf({});
    for (const name of stack.functions.keys()) expect(sesResources(name), name).toEqual([]);
    expect(environmentOf('alerts')[settingEnv.alertSender]).toBeUndefined();
  });
});
