/** Wires the edit review into the extension: documents, the waiting-edit diffs, the turn review, Explorer decorations. */
import * as vscode from 'vscode';
import type { EngineHost } from '../engine-host';
import { ReviewDecorations } from './decorations';
import { EditReview, registerEditReviewCommands } from './edit-review';
import { REVIEW_SCHEME, ReviewDocuments } from './review-documents';
import { registerTurnReviewCommands, TurnReview } from './turn-review';

export interface ReviewApi {
  readonly edits: EditReview;
  readonly turns: TurnReview;
  readonly decorations: ReviewDecorations;
}

export function registerReview(ctx: vscode.ExtensionContext, host: EngineHost, log: vscode.LogOutputChannel): ReviewApi {
  const docs = new ReviewDocuments();
  const edits = new EditReview(host, docs, log);
  const decorations = new ReviewDecorations(host);
  const turns = new TurnReview(host, decorations);
  ctx.subscriptions.push(
    docs,
    edits,
    decorations,
    vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, docs),
    vscode.window.registerFileDecorationProvider(decorations),
    ...registerEditReviewCommands(edits, log),
    ...registerTurnReviewCommands(turns, decorations, log),
  );
  return { edits, turns, decorations };
}
