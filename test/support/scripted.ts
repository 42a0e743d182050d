/**
 * Small pieces the engine tests against a scripted model server share: the host that points an
 * engine at a fake OpenAI-wire server, and a gate a scripted turn waits on (`holds`).
 */
import type { FakeServer } from './fake-openai-server';
import { TestHost } from './test-engine';

/** A host whose model is `openai:gpt-test` on the fake server, with a key and optional approval settings. */
export function openaiHost(server: FakeServer, approval?: unknown): TestHost {
  return new TestHost({ model: 'openai:gpt-test', secrets: { openaiApiKey: 'sk-x' }, providerSettings: { openaiBaseUrl: server.baseUrl }, ...(approval ? { approval } : {}) });
}

/** A promise a scripted turn waits on until the test calls `release`. */
export function heldGate(): { release: () => void; held: Promise<void> } {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  return { release, held };
}
