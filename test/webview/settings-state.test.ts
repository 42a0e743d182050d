/** The model picker's groups (webview/src/lib/settings-state.ts): recent by provider, the rest, the current model always there. */
import { strict as assert } from 'node:assert';
import { pickerGroups, toSettings } from '../../webview/src/lib/settings-state';

const demo = { ref: 'local:demo', label: 'Demo model', isDemo: true };

describe('webview settings: the picker groups', () => {
  it('recent models by provider first, then the offered ones not among them', () => {
    const groups = pickerGroups({
      model: 'ollama:qwen', demoNotice: null, models: [demo, { ref: 'openai:gpt-4o', label: 'openai:gpt-4o', isDemo: false }],
      recent: [
        { provider: 'ollama', label: 'Ollama', models: [{ ref: 'ollama:qwen', label: 'qwen', isDemo: false }] },
        { provider: 'openai', label: 'OpenAI', models: [{ ref: 'openai:gpt-4o', label: 'gpt-4o', isDemo: false }] },
      ],
    });
    assert.deepEqual(groups.map((g) => [g.label, g.models.map((m) => m.ref)]), [['Ollama', ['ollama:qwen']], ['OpenAI', ['openai:gpt-4o']], ['Other models', ['local:demo']]]);
  });

  it('without recent models: one "Models" group that includes the current model', () => {
    const groups = pickerGroups({ model: 'anthropic:claude', demoNotice: null, models: [demo] });
    assert.deepEqual(groups, [{ label: 'Models', models: [{ ref: 'anthropic:claude', label: 'anthropic:claude', isDemo: false }, demo] }]);
  });

  it('toSettings keeps recent and ui, drops the envelope', () => {
    const s = toSettings({ type: 'settings', model: 'local:demo', models: [demo], demoNotice: 'x', ui: { demoBannerDismissed: true, threadListCollapsed: false } } as never);
    assert.deepEqual(s, { model: 'local:demo', models: [demo], demoNotice: 'x', ui: { demoBannerDismissed: true, threadListCollapsed: false } });
  });
});
