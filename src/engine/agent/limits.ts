/** Limits of the agent loop (./runner.ts), shared with the turn rebuilt after a restart (./resume.ts). */

/** Most model calls in one turn before the run stops itself (guards against tool loops). */
export const MAX_AGENT_STEPS = 25;
/** Most characters of a tool result sent back to the model. */
export const TOOL_RESULT_MAX_CHARS = 32_000;
