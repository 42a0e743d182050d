/** Limits of the agent loop (./runner.ts), shared with the turn rebuilt after a restart (./resume.ts). */

/** Most model calls in one turn before the run stops itself (guards against tool loops). */
export const MAX_AGENT_STEPS = 25;
/**
 * Most characters of a tool result sent back to the model: the tools' one output limit, defined
 * beside their budget (../tools/text.ts) and re-exported here for the agent loop.
 */
export { TOOL_RESULT_MAX_CHARS } from '../tools/text';
/**
 * Most characters of an answer kept when the disk is too full to take all of it: the run's end
 * is written again with the answer's start and FULL_DISK_ANSWER_NOTE, small enough for the room
 * the store's disk reserve gives back (../store/disk-reserve.ts, 1 MiB).
 */
export const FULL_DISK_ANSWER_CHARS = 64 * 1024;
/** What ends an answer cut for a full disk. */
export const FULL_DISK_ANSWER_NOTE = '\n\n[the rest of this answer was not saved: the disk is full]';
