/**
 * The model picker's groups (`groupRecent`, what the webview picker shows): a `compat:` model of a
 * named endpoint is grouped under that endpoint's name, labelled by its model alone; a model id
 * holding `/` that names no endpoint stays whole under the first endpoint.
 */
import { strict as assert } from 'node:assert';
import { groupRecent } from '../../src/engine/connect/recent';

describe('recent models: named OpenAI-compatible endpoints in the picker', () => {
  it('groups compat models by endpoint, showing the endpoint with the model', () => {
    const groups = groupRecent(['compat:one/fake-large', 'compat:two/fake-large', 'compat:meta-llama/Llama-3', 'openai:gpt-4o'], ['one', 'two']);
    assert.deepEqual(groups.map((g) => [g.label, g.models.map((m) => `${m.label} = ${m.ref}`)]), [
      ['one (OpenAI-compatible)', ['fake-large = compat:one/fake-large', 'meta-llama/Llama-3 = compat:meta-llama/Llama-3']],
      ['two (OpenAI-compatible)', ['fake-large = compat:two/fake-large']],
      ['OpenAI', ['gpt-4o = openai:gpt-4o']],
    ]);
  });
});
