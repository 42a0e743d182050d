/**
 * The tool-catalog guard's pure parts (src/engine/mcp-catalog/): the threshold setting, the
 * direct/meta choice and routing of mcp_call, and the ENABLE_TOOL_SEARCH rule for Claude Code.
 */
import { strict as assert } from 'node:assert';
import { catalogSpecs, catalogThreshold, DEFAULT_TOOL_CATALOG_THRESHOLD, turnToolCatalog } from '../../src/engine/mcp-catalog/catalog';
import { claudeCodeToolSearchEnv, toolSearchValue, TOOL_SEARCH_ENV } from '../../src/engine/mcp-catalog/tool-search-env';
import { builtinToolRegistry } from '../../src/engine/tools/builtins';
import { ToolError } from '../../src/engine/tools/types';
import { fakeMcpTools } from '../support/fake-mcp-tools';

describe('tool-catalog guard: threshold and choice', () => {
  it('the threshold: whole numbers ≥ 0 kept, anything else the default 12', () => {
    assert.equal(DEFAULT_TOOL_CATALOG_THRESHOLD, 12);
    for (const v of [0, 1, 12, 40]) assert.equal(catalogThreshold(v), v);
    for (const v of [undefined, null, -1, 2.5, Number.NaN, Infinity, '5', {}]) assert.equal(catalogThreshold(v), 12, String(v));
  });

  it('counts only MCP-origin tools; > threshold → meta mode with the built-ins first', () => {
    const builtins = builtinToolRegistry().list();
    const mcp = fakeMcpTools(13).tools;
    const direct = turnToolCatalog([...builtins, ...mcp.slice(0, 12)], 12);
    assert.equal(direct.mode, 'direct');
    assert.equal(direct.mcpToolCount, 12);
    assert.equal(direct.offered.length, builtins.length + 12);
    const meta = turnToolCatalog([...builtins, ...mcp], 12);
    assert.equal(meta.mode, 'meta');
    assert.deepEqual(meta.offered.map((t) => t.spec.name), [...builtins.map((t) => t.spec.name), 'mcp_list_groups', 'mcp_describe', 'mcp_call']);
    assert.deepEqual(catalogSpecs(meta, false), []);
    assert.equal(turnToolCatalog(builtins, 0).mode, 'direct', 'no MCP tool: never meta, even at 0');
    assert.equal(turnToolCatalog([...builtins, mcp[0]!], 0).mode, 'meta');
  });

  it('route: a resolvable mcp_call becomes the real call (same id); everything else passes unchanged', () => {
    const meta = turnToolCatalog(fakeMcpTools(13).tools, 12);
    const routed = meta.route({ id: 'c1', name: 'mcp_call', argumentsJson: JSON.stringify({ tool: 'browser/navigate', arguments: { url: 'https://example.com' } }) });
    assert.deepEqual(routed, { id: 'c1', name: 'browser__navigate', argumentsJson: '{"url":"https://example.com"}' });
    assert.deepEqual(meta.route({ id: 'c2', name: 'mcp_call', argumentsJson: '{"tool":"browser__navigate"}' }).argumentsJson, '{}', 'no arguments: an empty object');
    const bad = { id: 'c3', name: 'mcp_call', argumentsJson: '{"tool":"x"}' };
    assert.equal(meta.route(bad), bad);
    assert.throws(() => meta.lookup('mcp_call')!.parseArgs(bad.argumentsJson), (e: unknown) => e instanceof ToolError && e.code === 'unknownTool');
    assert.throws(() => meta.lookup('mcp_call')!.parseArgs('[1]'), (e: unknown) => e instanceof ToolError && e.code === 'invalidArguments');
    assert.throws(() => meta.lookup('mcp_describe')!.parseArgs(JSON.stringify({ tools: Array.from({ length: 21 }, (_, i) => `t${i}`) })), /at most 20/);
    const direct = turnToolCatalog(fakeMcpTools(3).tools, 12);
    const call = { id: 'c4', name: 'mcp_call', argumentsJson: '{"tool":"github__list_issues"}' };
    assert.equal(direct.route(call), call, 'direct mode routes nothing');
    assert.equal(direct.lookup('mcp_call'), undefined);
  });
});

describe('ENABLE_TOOL_SEARCH for a delegated Claude Code', () => {
  const cases: Array<[string | undefined, string, string]> = [
    [undefined, 'true', 'unset → true'],
    ['', 'true', 'empty counts as unset'],
    ['auto', 'true', 'the heuristic → true'],
    ['auto:1', 'true', 'lowest heuristic percentage'],
    ['auto:10', 'true', 'Claude Code\'s default percentage'],
    ['auto:99', 'true', 'highest heuristic percentage'],
    ['auto:0', 'auto:0', 'lower end kept'],
    ['auto:100', 'auto:100', 'upper end kept'],
    ['auto:250', 'auto:250', 'beyond the range kept'],
    ['true', 'true', 'explicit on kept'],
    ['false', 'false', 'explicit off kept'],
    ['AUTO', 'AUTO', 'not the exact word: kept'],
    ['auto:5.5', 'auto:5.5', 'fractional: kept'],
    ['auto:-5', 'auto:-5', 'negative: kept'],
    ['auto:', 'auto:', 'no number: kept'],
    ['yes please', 'yes please', 'garbage kept'],
  ];
  for (const [input, expected, why] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)} (${why})`, () => {
      assert.equal(toolSearchValue(input), expected);
      const env = claudeCodeToolSearchEnv({ PATH: '/bin', HOME: undefined, ...(input === undefined ? {} : { [TOOL_SEARCH_ENV]: input }) });
      assert.deepEqual(env, { PATH: '/bin', [TOOL_SEARCH_ENV]: expected });
    });
  }
  it('does not change the environment it is given', () => {
    const env = { ENABLE_TOOL_SEARCH: 'auto' };
    claudeCodeToolSearchEnv(env);
    assert.deepEqual(env, { ENABLE_TOOL_SEARCH: 'auto' });
  });
});
