/** The salvage module (SPEC 3.2): false-refusal retry and tool calls written as text, as turn stages (./stages.ts). */
import type { EngineModule } from '../module';
import { installSalvageStages } from './stages';

export const salvageModule: EngineModule = { name: 'salvage', deps: [], install: ({ hooks }) => void installSalvageStages(hooks) };
