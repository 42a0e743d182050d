/**
 * AgentTools with an MCP origin and realistic schemas (modelled on the shapes GitHub, filesystem,
 * database and browser MCP servers publish), for the tool-catalog guard's tests and bench. Each
 * checks its arguments against its schema (required keys, primitive types, no unknown keys) and
 * records its calls; nothing here talks MCP (the catalog works from `AgentTool.origin` only).
 */
import { ToolError, type AgentTool, type ToolClass } from '../../src/engine/tools/types';

type Prop = { type: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object'; description: string; enum?: string[]; items?: { type: string } };

interface Template {
  server: string;
  tool: string;
  description: string;
  toolClass: ToolClass;
  properties: Record<string, Prop>;
  required: string[];
}

const TEMPLATES: Template[] = [
  { server: 'github', tool: 'create_issue', toolClass: 'execute', description: 'Create a new issue in a GitHub repository.\nReturns the created issue with its number and URL.', required: ['owner', 'repo', 'title'],
    properties: { owner: { type: 'string', description: 'Repository owner (user or organisation)' }, repo: { type: 'string', description: 'Repository name' }, title: { type: 'string', description: 'Issue title' }, body: { type: 'string', description: 'Issue body in GitHub-flavoured markdown' }, labels: { type: 'array', items: { type: 'string' }, description: 'Labels to apply' }, assignees: { type: 'array', items: { type: 'string' }, description: 'Usernames to assign' } } },
  { server: 'github', tool: 'list_issues', toolClass: 'read', description: 'List issues of a GitHub repository, newest first, with optional filters.', required: ['owner', 'repo'],
    properties: { owner: { type: 'string', description: 'Repository owner' }, repo: { type: 'string', description: 'Repository name' }, state: { type: 'string', enum: ['open', 'closed', 'all'], description: 'Issue state filter' }, labels: { type: 'array', items: { type: 'string' }, description: 'Only issues with all these labels' }, per_page: { type: 'integer', description: 'Results per page (max 100)' }, page: { type: 'integer', description: 'Page number' } } },
  { server: 'github', tool: 'get_pull_request', toolClass: 'read', description: 'Get the details of a pull request: title, body, state, head and base refs, mergeability and review status.', required: ['owner', 'repo', 'pull_number'],
    properties: { owner: { type: 'string', description: 'Repository owner' }, repo: { type: 'string', description: 'Repository name' }, pull_number: { type: 'integer', description: 'Pull request number' } } },
  { server: 'github', tool: 'create_pull_request_review', toolClass: 'execute', description: 'Create a review on a pull request (approve, request changes or comment), optionally with line comments.', required: ['owner', 'repo', 'pull_number', 'event'],
    properties: { owner: { type: 'string', description: 'Repository owner' }, repo: { type: 'string', description: 'Repository name' }, pull_number: { type: 'integer', description: 'Pull request number' }, body: { type: 'string', description: 'Review summary' }, event: { type: 'string', enum: ['APPROVE', 'REQUEST_CHANGES', 'COMMENT'], description: 'Review action' }, comments: { type: 'array', items: { type: 'object' }, description: 'Line comments {path, line, body}' } } },
  { server: 'github', tool: 'search_code', toolClass: 'read', description: 'Search code across GitHub repositories with GitHub code search syntax.', required: ['q'],
    properties: { q: { type: 'string', description: 'Search query, e.g. "addClass in:file language:js repo:jquery/jquery"' }, sort: { type: 'string', enum: ['indexed'], description: 'Sort field' }, order: { type: 'string', enum: ['asc', 'desc'], description: 'Sort order' }, per_page: { type: 'integer', description: 'Results per page (max 100)' } } },
  { server: 'postgres', tool: 'query', toolClass: 'read', description: 'Run a read-only SQL query against the connected PostgreSQL database and return the rows as JSON.', required: ['sql'],
    properties: { sql: { type: 'string', description: 'The SQL query (SELECT only; executed in a read-only transaction)' }, params: { type: 'array', items: { type: 'string' }, description: 'Positional parameters ($1, $2, …)' }, max_rows: { type: 'integer', description: 'Most rows returned (default 500)' } } },
  { server: 'postgres', tool: 'describe_table', toolClass: 'read', description: 'Describe a table: its columns with types, nullability and defaults, its indexes and foreign keys.', required: ['table'],
    properties: { schema: { type: 'string', description: 'Schema name (default public)' }, table: { type: 'string', description: 'Table name' } } },
  { server: 'postgres', tool: 'execute_migration', toolClass: 'execute', description: 'Apply a SQL migration inside a transaction; rolled back on any error.', required: ['sql', 'name'],
    properties: { name: { type: 'string', description: 'Migration name, recorded in the migrations table' }, sql: { type: 'string', description: 'DDL/DML statements to run' }, dry_run: { type: 'boolean', description: 'Run and roll back, reporting what would change' } } },
  { server: 'browser', tool: 'navigate', toolClass: 'execute', description: 'Navigate the browser page to a URL and wait until it has loaded.', required: ['url'],
    properties: { url: { type: 'string', description: 'The URL to open' }, wait_until: { type: 'string', enum: ['load', 'domcontentloaded', 'networkidle'], description: 'When navigation counts as finished' }, timeout_ms: { type: 'integer', description: 'Navigation timeout in milliseconds' } } },
  { server: 'browser', tool: 'click', toolClass: 'execute', description: 'Click an element of the current page, found by CSS selector or accessible name.', required: ['selector'],
    properties: { selector: { type: 'string', description: 'CSS selector or role=name of the element' }, button: { type: 'string', enum: ['left', 'right', 'middle'], description: 'Mouse button' }, click_count: { type: 'integer', description: 'Number of clicks' }, modifiers: { type: 'array', items: { type: 'string' }, description: 'Keys held during the click (Alt, Control, Meta, Shift)' } } },
  { server: 'browser', tool: 'snapshot', toolClass: 'read', description: 'Capture an accessibility snapshot of the current page (roles, names, states), optionally below one element.', required: [],
    properties: { selector: { type: 'string', description: 'Root element of the snapshot (default: the whole page)' }, interesting_only: { type: 'boolean', description: 'Drop nodes without a role or name' } } },
  { server: 'browser', tool: 'fill_form', toolClass: 'execute', description: 'Fill several form fields at once and optionally submit the form.', required: ['fields'],
    properties: { fields: { type: 'array', items: { type: 'object' }, description: 'Fields {selector, value} to fill in order' }, submit: { type: 'boolean', description: 'Press Enter in the last field afterwards' } } },
  { server: 'sentry', tool: 'get_issue_details', toolClass: 'read', description: 'Get a Sentry issue with its latest event: stack trace, tags, breadcrumbs and the release it first appeared in.', required: ['issue_id'],
    properties: { organization_slug: { type: 'string', description: 'Organisation slug' }, issue_id: { type: 'string', description: 'Sentry issue id or short id (PROJ-123)' }, include_breadcrumbs: { type: 'boolean', description: 'Include the event breadcrumbs' } } },
];

export interface FakeMcpTools {
  tools: AgentTool[];
  /** Calls that ran, in order: the registered name and the parsed arguments. */
  calls: Array<{ name: string; args: Record<string, unknown> }>;
}

function typeOk(p: Prop, v: unknown): boolean {
  switch (p.type) {
    case 'string': return typeof v === 'string' && (!p.enum || p.enum.includes(v));
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'number': return typeof v === 'number' && Number.isFinite(v);
    case 'boolean': return typeof v === 'boolean';
    case 'array': return Array.isArray(v);
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

/**
 * `count` MCP tools: the templates in order, then again with numbered servers (`github2`, …) for
 * counts beyond them. Registered names are `<server>__<tool>` (how an MCP client namespaces them).
 */
export function fakeMcpTools(count: number): FakeMcpTools {
  const calls: FakeMcpTools['calls'] = [];
  const tools: AgentTool[] = [];
  for (let i = 0; i < count; i++) {
    const t = TEMPLATES[i % TEMPLATES.length]!;
    const round = Math.floor(i / TEMPLATES.length);
    const server = round === 0 ? t.server : `${t.server}${round + 1}`;
    const name = `${server}__${t.tool}`;
    tools.push({
      spec: { name, description: t.description, parameters: { type: 'object', properties: t.properties, required: t.required, additionalProperties: false } },
      toolClass: t.toolClass,
      mutating: t.toolClass !== 'read',
      origin: { kind: 'mcp', server, tool: t.tool },
      parseArgs(json) {
        let v: unknown;
        try {
          v = JSON.parse(json);
        } catch {
          throw new ToolError('invalidArguments', `${name}: the arguments are not valid JSON.`);
        }
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ToolError('invalidArguments', `${name}: the arguments must be an object.`);
        const a = v as Record<string, unknown>;
        for (const r of t.required) if (!(r in a)) throw new ToolError('invalidArguments', `${name}: "${r}" is required.`);
        for (const [k, val] of Object.entries(a)) {
          const p = t.properties[k];
          if (!p) throw new ToolError('invalidArguments', `${name}: unknown property "${k}".`);
          if (!typeOk(p, val)) throw new ToolError('invalidArguments', `${name}: "${k}" must be ${p.type}${p.enum ? ` (one of ${p.enum.join(', ')})` : ''}.`);
        }
        return a;
      },
      async run(args) {
        calls.push({ name, args: args as Record<string, unknown> });
        return { content: `${name} ok: ${JSON.stringify(args)}` };
      },
    });
  }
  return { tools, calls };
}
