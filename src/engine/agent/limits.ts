/** Limits of the agent loop (./runner.ts), shared with the turn rebuilt after a restart (./resume.ts). */

/** Most model calls in one turn before the run stops itself (guards against tool loops). */
export const MAX_AGENT_STEPS = 25;
/**
 * Most characters of a tool result sent back to the model: the tools' one output limit, defined
 * beside their budget (../tools/text.ts) and re-exported here for the agent loop.
 */
export { TOOL_RESULT_MAX_CHARS } from '../tools/text';
