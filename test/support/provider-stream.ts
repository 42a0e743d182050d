/** Helpers shared by the provider tests: drain a provider stream, keep its typed error, read its text. */
import { strict as assert } from 'node:assert';
import { ProviderError, type ProviderEvent, type ToolSpec } from '../../src/engine/providers/types';

/** Upper bound for "cancellation is quick". */
export const CANCEL_DEADLINE_MS = 1000;

export const READ_FILE: ToolSpec = {
  name: 'read_file',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

export interface Collected {
  events: ProviderEvent[];
  error?: ProviderError;
}

/** Collects every event; a thrown error must be a ProviderError and is returned, not thrown. */
export async function collect(stream: AsyncIterable<ProviderEvent>, onEvent?: (e: ProviderEvent) => void): Promise<Collected> {
  const events: ProviderEvent[] = [];
  try {
    for await (const e of stream) {
      events.push(e);
      onEvent?.(e);
    }
    return { events };
  } catch (e) {
    assert.ok(e instanceof ProviderError, `expected ProviderError, got ${String(e)}`);
    return { events, error: e };
  }
}

export const textOf = (events: ProviderEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('');
