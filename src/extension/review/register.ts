/**
 * The edit review as one contribution (../contribution.ts): `vox-review:` documents, the
 * waiting-edit diffs, the turn review, Explorer decorations, and their commands.
 */
import * as vscode from 'vscode';
import type { ExtensionContribution } from '../contribution';
import { ReviewDecorations } from './decorations';
import { EditReview, registerEditReviewCommands } from './edit-review';
import { REVIEW_SCHEME, ReviewDocuments } from './review-documents';
import { registerTurnReviewCommands, TurnReview } from './turn-review';

export interface ReviewApi {
  readonly edits: EditReview;
  readonly turns: TurnReview;
  readonly decorations: ReviewDecorations;
}

export const review: ExtensionContribution<ReviewApi> = {
  name: 'edit review',
  commands: [
    // A waiting edit (the diff editor's title bar, the palette).
    'vox.review.acceptEdit', 'vox.review.rejectEdit', 'vox.review.acceptAllEdits',
    // A turn's changes (the palette, the chat's run footer, the Explorer's decorated files).
    'vox.review.changes', 'vox.review.keepFile', 'vox.review.undoFile', 'vox.review.undoHunk', 'vox.review.markAllReviewed',
  ],
  activate({ host, log }, scope) {
    const docs = scope.add(new ReviewDocuments());
    const edits = scope.add(new EditReview(host, docs, log));
    const decorations = scope.add(new ReviewDecorations(host));
    const turns = new TurnReview(host, decorations);
    scope.add(vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, docs));
    scope.add(vscode.window.registerFileDecorationProvider(decorations));
    registerEditReviewCommands(edits, log, scope);
    registerTurnReviewCommands(turns, decorations, log, scope);
    return { edits, turns, decorations };
  },
};
