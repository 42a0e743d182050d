/** A run's posture names its model once: `compat:fake-large`, never `compat:compat:fake-large`. */
import { strict as assert } from 'node:assert';
import { postureModelRef } from '../../src/protocol/posture';

describe('posture: the model ref shown', () => {
  it('a posture whose model is already a ref (what the engine records) is not prefixed again', () => {
    assert.equal(postureModelRef({ provider: 'compat', model: 'compat:fake-large' }), 'compat:fake-large');
  });
  it('a bare model name gets its provider', () => {
    assert.equal(postureModelRef({ provider: 'openai', model: 'gpt-4o-mini' }), 'openai:gpt-4o-mini');
  });
});
