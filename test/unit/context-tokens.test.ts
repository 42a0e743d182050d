/**
 * Token counting per provider family (src/engine/providers/token-count.ts) and context windows
 * (context-windows.ts): exact counts from gpt-tokenizer for fixed inputs, the right encoding per
 * OpenAI model, OpenAI's message framing, the approximation for other families, and the local
 * model's own tokenizer (the real demo GGUF through node-llama-cpp).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { APPROX_CHARS_PER_TOKEN, OPENAI_REPLY_PRIMING_TOKENS, OPENAI_TOKENS_PER_MESSAGE, countPrompt, countSourceOf, countText, openaiEncodingOf } from '../../src/engine/providers/token-count';
import { contextWindowOf, knownContextWindow } from '../../src/engine/providers/context-windows';
import type { ModelProvider, ResolvedModel } from '../../src/engine/providers/types';
import { LocalLlamaProvider } from '../../src/engine/providers/local-llama';

const fakeProvider = (id: string): ModelProvider => ({ id, isLocal: false, stream: () => { throw new Error('not streamed'); } });
const resolved = (id: string, model: string): ResolvedModel => ({ provider: fakeProvider(id), model, label: `${id}:${model}`, toolsEnabled: true });

describe('context: token counts per provider family', function () {
  this.timeout(60_000);

  it('gpt-tokenizer counts fixed texts exactly (o200k_base and cl100k_base differ where they should)', async () => {
    assert.equal(await countText('o200k_base', 'Explain the context meter.'), 5);
    assert.equal(await countText('cl100k_base', 'Explain the context meter.'), 6);
    assert.equal(await countText('o200k_base', 'hello world'), 2);
    assert.equal(await countText('o200k_base', 'function add(a, b) {\n  return a + b;\n}\n'), 14);
    assert.equal(await countText('o200k_base', 'Hello, world! This is Vox.'), 8);
  });

  it('picks the encoding by OpenAI model name (OpenRouter prefix too); other names are not OpenAI', () => {
    assert.equal(openaiEncodingOf('gpt-4o-mini'), 'o200k_base');
    assert.equal(openaiEncodingOf('gpt-4.1'), 'o200k_base');
    assert.equal(openaiEncodingOf('o4-mini'), 'o200k_base');
    assert.equal(openaiEncodingOf('openai/gpt-5'), 'o200k_base');
    assert.equal(openaiEncodingOf('gpt-4'), 'cl100k_base');
    assert.equal(openaiEncodingOf('gpt-3.5-turbo'), 'cl100k_base');
    assert.equal(openaiEncodingOf('llama3.1:8b'), null);
    assert.equal(countSourceOf(resolved('openai', 'gpt-4o')), 'o200k_base');
    assert.equal(countSourceOf(resolved('openai', 'qwen2.5-coder')), 'approximation');
    assert.equal(countSourceOf(resolved('openrouter', 'openai/gpt-4o-mini')), 'o200k_base');
    assert.equal(countSourceOf(resolved('openrouter', 'anthropic/claude-3.5-sonnet')), 'approximation');
    assert.equal(countSourceOf(resolved('anthropic', 'claude-sonnet-4-5')), 'approximation');
  });

  it('a request counts its messages with OpenAI framing, plus the tool definitions', async () => {
    const messages = [{ role: 'system' as const, content: 'hello world' }, { role: 'user' as const, content: 'Explain the context meter.' }];
    const c = await countPrompt(resolved('openai', 'gpt-4o'), messages);
    assert.deepEqual(c, { tokens: OPENAI_REPLY_PRIMING_TOKENS + 2 * OPENAI_TOKENS_PER_MESSAGE + 2 + 5, source: 'o200k_base' });
    const tools = [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } }];
    const withTools = await countPrompt(resolved('openai', 'gpt-4o'), messages, tools);
    assert.equal(withTools.tokens, c.tokens + (await countText('o200k_base', JSON.stringify(tools))));
  });

  it('other families use the documented approximation (characters / 3.5, rounded up)', async () => {
    const text = 'x'.repeat(36);
    assert.equal(await countText('approximation', text), Math.ceil(36 / APPROX_CHARS_PER_TOKEN));
    const c = await countPrompt(resolved('anthropic', 'claude-sonnet-4-5'), [{ role: 'user', content: text }]);
    assert.deepEqual(c, { tokens: 11, source: 'approximation' });
  });

  it('context windows: known models by prefix, unknown ones null', async () => {
    assert.equal(knownContextWindow('gpt-4o-mini'), 128_000);
    assert.equal(knownContextWindow('gpt-4'), 8_192);
    assert.equal(knownContextWindow('gpt-4-turbo'), 128_000);
    assert.equal(knownContextWindow('claude-sonnet-4-5'), 200_000);
    assert.equal(knownContextWindow('anthropic/claude-3-5-haiku'), 200_000);
    assert.equal(knownContextWindow('my-finetune'), null);
    assert.deepEqual(await contextWindowOf(resolved('openai', 'my-finetune')), { tokens: null, source: 'unknown' });
    assert.deepEqual(await contextWindowOf(resolved('openai', 'gpt-4.1-mini')), { tokens: 1_047_576, source: 'table' });
  });

  it('the local model counts with its own tokenizer and reports its context size', async () => {
    const demo = path.resolve(__dirname, '../../models/vox-demo.gguf');
    const local = new LocalLlamaProvider({ demoModelPath: demo });
    try {
      const model: ResolvedModel = { provider: local, model: demo, label: 'local:demo', toolsEnabled: false };
      const short = await countPrompt(model, [{ role: 'user', content: 'hi' }]);
      const long = await countPrompt(model, [{ role: 'user', content: 'hi there, how are you' }]);
      assert.equal(short.source, 'llama.cpp');
      // The demo model's vocabulary is one token a character: 19 more characters, 19 more tokens.
      assert.equal(long.tokens - short.tokens, 19);
      assert.deepEqual(await contextWindowOf(model), { tokens: await local.contextWindow(demo), source: 'provider' });
      assert.ok((await local.contextWindow(demo)) > 0);
    } finally {
      await local.dispose();
    }
  });
});
