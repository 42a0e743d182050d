/** The sanitiser module (SPEC 3.5): inline reasoning split off a model's stream (./stages.ts); its text functions serve the conversation. */
import type { EngineModule } from '../module';
import { installSanitizeStages } from './stages';

export const sanitizeModule: EngineModule = { name: 'sanitize', deps: [], install: ({ hooks }) => void installSanitizeStages(hooks) };
