/**
 * Context handoff commands (SPEC 5.1): preview the `<context_handoff>` preamble the thread's next
 * prompt would get on a model, with a strategy (default `deltaSinceTargetLastSeen`) — what it
 * covers, carries and leaves out, and the preamble itself.
 */
import { bool, nullable, object, optional, str, type Infer } from '../wire/validators';
import { handoffStrategy, handoffSummaryShape, manualContextText } from '../handoff';
import { name } from './common';
import { defineCommand } from './define';

export const handoffPreview = object({
  /** The model the preview is for (the thread's next prompt), as a ref. */
  model: str,
  /** True when that model differs from the thread's last run: a prompt would get this handoff automatically (with the default strategy). */
  modelChanged: bool,
  /** null: the strategy covers no run (an empty thread, or the target already saw every run). */
  handoff: nullable(object({ ...handoffSummaryShape, preamble: str })),
});
export type HandoffPreview = Infer<typeof handoffPreview>;

export const handoffCommands = {
  previewHandoff: defineCommand('previewHandoff', {
    readOnly: true,
    summary: 'The <context_handoff> preamble the thread\'s next prompt would get on a model (default: the configured one) with a strategy (default deltaSinceTargetLastSeen): runs covered, turns verbatim / compacted / left out, tokens, bytes.',
    requires: ['read'],
    params: {
      threadId: name,
      model: optional(str),
      strategy: optional(handoffStrategy),
      manualContext: optional(manualContextText),
    },
    result: handoffPreview,
  }),
};
