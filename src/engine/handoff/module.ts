/** The handoff module (SPEC 5.1): the preamble of a turn whose model changed (./stages.ts); its commands' handlers are in session/handlers/handoff.ts. */
import type { EngineModule } from '../module';
import { installHandoffStages } from './stages';

export const handoffModule: EngineModule = { name: 'handoff', deps: [], install: ({ hooks, store }) => void installHandoffStages(hooks, store) };
