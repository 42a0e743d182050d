/**
 * Test set-up (loaded by .mocharc before every suite): a store a test opens directly runs with the
 * engine's modules' schema, as the engine opens it (src/engine/store/schema.ts).
 */
import { setDefaultStoreSchemas } from '../../src/engine/store/schema';
import { STORE_SCHEMAS } from '../../src/engine/modules';

setDefaultStoreSchemas(STORE_SCHEMAS);
