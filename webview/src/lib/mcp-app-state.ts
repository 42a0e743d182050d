/**
 * MCP Apps in the thread state (SPEC 5.3): the app a tool call returned rides on its item
 * (`item.completed {app}`) and on its live stream segment (`toolResult {app}`); the state the app
 * saved (`mcpApp.stateSaved`) on its item, so the frame gets it back when the thread replays.
 */
import type { RunView } from './run-views';

/** Sets the saved state of the app item `itemId` (an unknown item — not replayed yet, or another thread's — is ignored). */
export function applyAppStateSaved(runs: Record<string, RunView>, itemId: string, saved: string): boolean {
  for (const run of Object.values(runs)) {
    const item = run.items.find((i) => i.itemId === itemId);
    if (item) {
      item.appState = saved;
      return true;
    }
  }
  return false;
}
