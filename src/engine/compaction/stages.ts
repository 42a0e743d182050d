/** Automatic compaction in a turn (SPEC 3.7, ./auto.ts): before every model call, a request that would not fit the window is compacted. */
import type { HookBus } from '../agent/hooks';
import type { ToolSpec } from '../providers/types';
import { autoCompactor, type AutoCompactionDeps } from './auto';

/** Before the other beforeModelCall handlers: they see the request as it will be sent. */
const COMPACTION_ORDER = -100;

export function installCompactionStages(bus: HookBus, deps: AutoCompactionDeps): () => void {
  const compact = autoCompactor(deps);
  return bus.on('beforeModelCall', async ({ turn, specs }, out) => {
    await compact(turn, out.messages, specs as ToolSpec[]);
  }, { name: 'compaction: automatic', order: COMPACTION_ORDER, failure: 'stopsTurn' });
}
