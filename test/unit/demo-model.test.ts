/** Demo model id, path resolution (VOX_MODEL_DIR override) and the user-facing notice. */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  DEMO_MODEL_ID,
  DEMO_MODEL_NOTICE,
  demoModelPath,
  isDemoModel,
  resolveLocalModelPath,
} from '../../src/engine/model/demo-model';

describe('demo model facts', function () {
  it('resolves the demo path from the root or VOX_MODEL_DIR', function () {
    assert.equal(demoModelPath('/ext', {}), path.join('/ext', 'models', 'vox-demo.gguf'));
    assert.equal(demoModelPath('/ext', { VOX_MODEL_DIR: '/data/models' }), path.join('/data/models', 'vox-demo.gguf'));
    assert.equal(demoModelPath('/ext', { VOX_MODEL_DIR: '  ' }), path.join('/ext', 'models', 'vox-demo.gguf'));
  });

  it('maps local model names to paths', function () {
    assert.equal(DEMO_MODEL_ID, 'local:demo');
    assert.ok(isDemoModel('demo') && isDemoModel('local:demo') && !isDemoModel('/m/demo.gguf'));
    assert.equal(resolveLocalModelPath('local:demo', '/ext', {}), path.join('/ext', 'models', 'vox-demo.gguf'));
    assert.equal(resolveLocalModelPath('local:/m/q.gguf', '/ext', {}), '/m/q.gguf');
    assert.equal(resolveLocalModelPath('m/q.gguf', '/ext', {}), path.join('/ext', 'm', 'q.gguf'));
  });

  it('has a one-sentence notice that says what to do instead', function () {
    assert.match(DEMO_MODEL_NOTICE, /nonsense/);
    assert.match(DEMO_MODEL_NOTICE, /GGUF/);
    assert.match(DEMO_MODEL_NOTICE, /Ollama/);
    assert.match(DEMO_MODEL_NOTICE, /API key/);
    assert.equal(DEMO_MODEL_NOTICE.split(/\.\s/).length, 1, 'one sentence');
  });
});
