/**
 * Search across threads (SPEC 6.4): `searchThreads` for the search box under `search`
 * (../thread-search.ts; its answer or error goes to the box, never a notice), and the request to
 * scroll the open thread to a message and highlight it (`requestReveal`: a search result, or the
 * extension's "open thread at message").
 */
import { SearchRequests } from '../thread-search';
import { defineFeature } from './feature';

export const searchFeature = defineFeature({
  name: 'search',
  install(ctx) {
    let revealSeq = 0;
    /** `searchThreads` for the search box (../thread-search.ts). */
    const search = new SearchRequests((c) => ctx.send(c));
    return {
      intents: {
        search,
        /** Asks the thread's list to scroll to `messageId` and highlight it once it is loaded (../../components/MessageReveal.svelte). */
        requestReveal(threadId: string, messageId: string): void {
          ctx.model.reveal = { threadId, messageId, n: ++revealSeq };
        },
      },
      results: {
        searchThreads: (value, _req, inReplyTo) => void search.onResult(inReplyTo, 'searchThreads', value),
      },
      errors: {
        searchThreads: (u) => search.onError(u.inReplyTo, 'searchThreads', u.message), // shown in the search box
      },
    };
  },
});
