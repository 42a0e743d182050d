/**
 * The list of Vox's capability modules (./module.ts), in the order their stages run when two
 * share a stage and an order. A new capability is a folder with a `module.ts` and a line here.
 * Also the store schema of every module, for opening a database the way the engine does.
 */
import type { EngineModule } from './module';
import { ResolvedSchema, type StoreSchema } from './store/schema';
import { sanitizeModule } from './sanitize/module';
import { conversationModule } from './conversation/module';
import { plansModule } from './plans/module';
import { mcpCatalogModule } from './mcp-catalog/module';
import { rulesModule } from './rules/module';
import { salvageModule } from './salvage/module';
import { handoffModule } from './handoff/module';
import { mcpAppsModule } from './mcp-apps/module';
import { compactionModule } from './compaction/module';
import { searchModule } from './search/module';
import { areasModule } from './session/handlers/index';
import { ledgerModule } from './ledger/module';

export const MODULES: readonly EngineModule[] = [
  sanitizeModule,
  conversationModule,
  plansModule,
  mcpCatalogModule,
  rulesModule,
  salvageModule,
  handoffModule,
  mcpAppsModule,
  compactionModule,
  searchModule,
  ledgerModule,
  areasModule,
];

/** The store's schema contributions of every module. */
export const STORE_SCHEMAS: readonly StoreSchema[] = MODULES.flatMap((m) => (m.schema ? [m.schema] : []));

/** The schema version a database the engine opens ends at. */
export const LATEST_SCHEMA_VERSION = new ResolvedSchema(STORE_SCHEMAS).latest;
