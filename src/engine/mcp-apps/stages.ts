/**
 * MCP Apps in a turn (SPEC 5.3): the saved states of the apps on the thread's path as
 * `<mcp_app_context>` blocks before the turn's user message (./context.ts), and the app a tool
 * result carries checked (./resource.ts) — shown with the result, or the model told why not.
 */
import { PREPARE_ORDER, type HookBus } from '../agent/hooks';
import type { VoxStore } from '../store/store';
import { applyMcpAppContext } from './context';
import { appOfResult } from './resource';

/** Last of the messages phase: the blocks come first in the user message. */
const APP_CONTEXT_ORDER = PREPARE_ORDER.messages + 20;

export function installMcpAppStages(bus: HookBus, store: VoxStore): () => void {
  const off = [
    bus.on('prepareRequest', ({ turn }, out) => {
      applyMcpAppContext(store, turn, out.messages);
    }, { name: 'mcp-apps: app context', order: APP_CONTEXT_ORDER, failure: 'stopsTurn' }),
    bus.on('afterTool', (_c, out) => {
      const result = out.result;
      if (!result?.app) return;
      const outcome = appOfResult(result.app);
      if (outcome && 'refused' in outcome) {
        const { app: _refused, ...rest } = result;
        out.result = { ...rest, content: `${result.content}\n[The MCP App was not shown: ${outcome.refused}.]` };
      } else if (outcome) out.result = { ...result, app: outcome.app };
    }, { name: 'mcp-apps: result app', failure: 'stopsTurn' }),
  ];
  return () => off.forEach((f) => f());
}
