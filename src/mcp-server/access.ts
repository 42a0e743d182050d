/**
 * McpToolAccess: what an MCP tool of Vox may do, declared with the tool (./registry.ts refuses a
 * tool without one). The declaration is checked against the caller's grant level before the
 * handler runs; the engine then checks the protocol grant again on every command it sends.
 *
 *   reads                    any caller (every grant holds `read`)
 *   writes                   needs `write`: read-only callers get `capabilityDenied`
 *   writesWithCapability(c)  needs the protocol capability `c` (`owner` is never held by an MCP client)
 *   startsThreads(r, i)      starts a thread in runtime mode r and interaction mode i (each a mode
 *                            or a function of the call's arguments): a mode above the caller's is
 *                            `escalation` (naming the mode asked and the caller's); then it needs
 *                            `startThreads` (`capabilityDenied` for a read-only caller)
 */
import { holds, type Capability } from '../protocol/commands/grants';
import { McpServerError } from './errors';
import {
  INTERACTION_MODES, MODE_CEILING, RUNTIME_MODES, interactionLevel, mcpGrant, runtimeLevel,
  type InteractionMode, type McpGrantLevel, type RuntimeMode,
} from './grants';

type ModeOf<M> = M | ((args: Record<string, unknown>) => M);

export type McpToolAccessDecl =
  | { readonly kind: 'reads' }
  | { readonly kind: 'writes'; readonly capability: Capability }
  | { readonly kind: 'startsThreads'; readonly runtime: ModeOf<RuntimeMode>; readonly interaction: ModeOf<InteractionMode> };

/** Declarations made here (a look-alike object literal is not one: ./registry.ts checks membership). */
const DECLARED = new WeakSet<object>();

function declare<T extends McpToolAccessDecl>(d: T): T {
  DECLARED.add(Object.freeze(d));
  return d;
}

export const McpToolAccess = {
  reads: declare({ kind: 'reads' }),
  writes: declare({ kind: 'writes', capability: 'write' }),
  writesWithCapability(capability: Capability): McpToolAccessDecl {
    return declare({ kind: 'writes', capability });
  },
  startsThreads(runtime: ModeOf<RuntimeMode>, interaction: ModeOf<InteractionMode>): McpToolAccessDecl {
    if (typeof runtime === 'string' && !RUNTIME_MODES.includes(runtime)) throw new McpServerError('rawRegistration', `unknown runtime mode "${String(runtime)}"`);
    if (typeof interaction === 'string' && !INTERACTION_MODES.includes(interaction)) throw new McpServerError('rawRegistration', `unknown interaction mode "${String(interaction)}"`);
    return declare({ kind: 'startsThreads', runtime, interaction });
  },
} as const;

export function isAccessDeclaration(a: unknown): a is McpToolAccessDecl {
  return typeof a === 'object' && a !== null && DECLARED.has(a);
}

/**
 * Whether a caller at `level` can make any call of a tool with this access: what `tools/list`
 * shows it (./registry.ts omits the rest; calling one anyway still gets checkAccess's refusal).
 * A thread-starting tool is callable when the grant holds `startThreads` and the modes it names
 * (when fixed) are within the caller's ceiling.
 */
export function mayCall(access: McpToolAccessDecl, level: McpGrantLevel): boolean {
  const grant = mcpGrant(level, 'MCP client');
  switch (access.kind) {
    case 'reads':
      return holds(grant, 'read');
    case 'writes':
      return holds(grant, access.capability);
    case 'startsThreads': {
      const ceiling = MODE_CEILING[level];
      const runtimeOk = typeof access.runtime === 'function' || runtimeLevel(access.runtime) <= runtimeLevel(ceiling.runtime);
      const interactionOk = typeof access.interaction === 'function' || interactionLevel(access.interaction) <= interactionLevel(ceiling.interaction);
      return holds(grant, 'startThreads') && runtimeOk && interactionOk;
    }
  }
}

const LEVEL_LABEL: Record<McpGrantLevel, string> = { readOnly: 'read-only', default: 'default', fullAccess: 'full-access' };

/** Refuses the call when the caller's grant level does not cover the tool's access; returns the modes a thread start asked for. */
export function checkAccess(tool: string, access: McpToolAccessDecl, level: McpGrantLevel, args: Record<string, unknown>): { runtime: RuntimeMode; interaction: InteractionMode } | null {
  const grant = mcpGrant(level, 'MCP client');
  const denied = (cap: Capability) => new McpServerError('capabilityDenied', `${tool} needs the ${cap} capability, which a ${LEVEL_LABEL[level]} MCP grant does not hold`, { missing: [cap], grant: level });
  switch (access.kind) {
    case 'reads':
      if (!holds(grant, 'read')) throw denied('read');
      return null;
    case 'writes':
      if (!holds(grant, access.capability)) throw denied(access.capability);
      return null;
    case 'startsThreads': {
      const runtime = typeof access.runtime === 'function' ? access.runtime(args) : access.runtime;
      const interaction = typeof access.interaction === 'function' ? access.interaction(args) : access.interaction;
      const ceiling = MODE_CEILING[level];
      if (runtimeLevel(runtime) > runtimeLevel(ceiling.runtime)) {
        throw new McpServerError('escalation', `${tool} asked for runtime mode ${runtime}, above this caller's ${ceiling.runtime} (a ${LEVEL_LABEL[level]} MCP grant)`, { asked: { runtimeMode: runtime }, caller: { runtimeMode: ceiling.runtime }, grant: level });
      }
      if (interactionLevel(interaction) > interactionLevel(ceiling.interaction)) {
        throw new McpServerError('escalation', `${tool} asked for interaction mode ${interaction}, above this caller's ${ceiling.interaction} (a ${LEVEL_LABEL[level]} MCP grant)`, { asked: { interactionMode: interaction }, caller: { interactionMode: ceiling.interaction }, grant: level });
      }
      if (!holds(grant, 'startThreads')) throw denied('startThreads');
      return { runtime, interaction };
    }
  }
}
