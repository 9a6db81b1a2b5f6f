/** X-Ray in the stack (issue 13, item 4): active tracing on every function, and the Powertools layer when named. */
import { describe, expect, it } from 'vitest';
import { synthKoerier } from './synth.js';

const LAYER = 'arn:aws:lambda:eu-west-1:094274105915:layer:AWSLambdaPowertoolsTypeScriptV2:40';

function lambdas(context: Record<string, unknown> = {}) {
  return Object.values(synthKoerier({ context }).resources).filter(
    (resource) =>
      resource.Type === 'AWS::Lambda::Function' && String(resource.Properties.Description ?? '').startsWith('Koerier '),
  );
}

describe('tracing in the stack', () => {
  it('every function traces actively, and with koerier:powertoolsLayerArn has the layer its Tracer is loaded from', () => {
    const plain = lambdas();
    expect(plain.length).toBeGreaterThan(5);
    for (const fn of plain) {
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Layers ?? []).not.toContain(LAYER);
    }
    for (const fn of lambdas({ 'koerier:powertoolsLayerArn': LAYER })) expect(fn.Properties.Layers).toContain(LAYER);
  });
});
