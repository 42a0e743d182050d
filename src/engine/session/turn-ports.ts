/**
 * The turn-start ports (../runs/start-turn.ts) of a session's command: the engine's store, runs,
 * models and queue, the MCP servers' bounded wait (a client's prompt gets their tools), and the
 * session's grant with the thread modes it is checked against (../permissions/grant-modes.ts).
 */
import type { Grant } from '../../protocol/commands/grants';
import type { TurnStartPorts } from '../runs/start-turn';
import type { EngineServices } from '../services';

export function sessionTurnPorts(services: EngineServices, grant: Grant, opts: { waitForMcp: boolean } = { waitForMcp: true }): TurnStartPorts {
  const { store, runs, queue, providers, host, mcp, permissions, plans } = services;
  return {
    store, runs, queue, grant,
    resolveModel: (ref) => providers.resolve(ref),
    defaultModel: () => host.model(),
    modesOf: (threadId) => ({ permissionMode: permissions.mode(threadId).mode, workMode: plans.workMode(threadId) }),
    ...(opts.waitForMcp ? { mcp: { readyWithin: () => mcp.readyWithin() } } : {}),
  };
}
