/**
 * `defineUiSet`: the one scaffold of the e2e sets that run in their own code-server session
 * (test/e2e/ui-*.ts, run by run-e2e.mjs through runner.mjs's UI_SETS). A set declares its name,
 * its checks' names, the state its checks build on, the settings of its fresh profile (and what
 * to plant before code-server starts), and `run`, its checks in order; the scaffold does the rest,
 * the same for every set:
 *
 *   - the scripted OpenAI-compatible server when the set asks for one (`fake`), started first;
 *   - the set's folders under rootDir (`uiDirs`), the sample workspace (or the set's own), then
 *     `prepare` (files, databases, more servers) and the session (`startUiSession`: settings,
 *     code-server, browser context);
 *   - when any of that fails, every check of the set fails with the reason ("the … session did not
 *     start: …"), so the run still counts all of them;
 *   - the check bookkeeping: `check(name, fn)` is the runner's named check, timed under its name,
 *     with a screenshot of the page on failure; `requireState` guards checks that build on earlier
 *     ones ("not run: an earlier step failed (…)");
 *   - `shot`, `shots` and the side bar's chat frame (`sidebar`);
 *   - closing, whatever happened: the session, then what `onClose` registered (last first), the
 *     fake server last.
 */
import type { Frame, Page } from 'playwright-core';
import { startFakeOpenAI, type FakeServer, type FakeServerOptions } from '../support/fake-openai-server';
import * as h from './harness';
import { SIDEBAR } from './ui-chat-context';
import { startUiSession, stateGuard, timedOf, uiDirs, VOX_WEBVIEW, type Timed, type UiCheckOptions, type UiDirs, type UiSession } from './ui-session';

/** What `prepare` and `settings` get: the set's folders, its fake server (when it asked for one), and `onClose`. */
export interface UiSetSetup {
  o: UiCheckOptions;
  dirs: UiDirs;
  /** The scripted OpenAI-compatible server; throws when the set did not ask for one. */
  readonly fake: FakeServer;
  /** Runs `fn` when the set ends (after the session is closed; the last registered first); its failure is ignored. */
  onClose(fn: () => unknown): void;
}

/** What the set's `run` gets. */
export interface UiSetContext<K extends string, X> extends UiSetSetup {
  timed: Timed;
  session: UiSession;
  page: Page;
  /** Screenshots taken with `shot`, by name. */
  shots: Record<string, string>;
  shot(name: string): Promise<void>;
  /** Opens the workbench on the workspace; returns "N s since the call". */
  openWorkbench(): Promise<() => string>;
  /** The Vox chat view's frame in the side bar (blank-webview retry included). */
  sidebar(): Promise<Frame>;
  /** The state the checks build on (the set's `state`, set by its checks). */
  state: Record<K, boolean>;
  requireState(...keys: K[]): void;
  /** One named check: the runner's, timed under its name, the page screenshotted on failure. */
  check(name: string, fn: () => Promise<unknown>): Promise<void>;
  /** What `prepare` returned. */
  setup: X;
}

export interface UiSetDefinition<N extends Record<string, string>, K extends string, X> {
  /** The set's label ("refusal UI"): log lines, timings, the "did not start" reason. */
  name: string;
  /** The prefix of its folders under rootDir (`<dir>-home`, `<dir>-workspace`, …). */
  dir: string;
  /** Its checks' names by key, in order (what runner.mjs counts and `--set`'s `only` picks from). */
  checks: N;
  /** The flags its checks build on, all false at first. */
  state?: Record<K, boolean>;
  /** How `requireState` names a missing flag (default: its key), and what joins them (default ", "). */
  describeState?: (k: K) => string;
  stateSep?: string;
  /** Start the scripted OpenAI-compatible server with these options (before anything else). */
  fake?: FakeServerOptions;
  /** Builds the workspace in `dir` (default: the sample workspace). */
  workspace?: (dir: string) => void;
  /** After the workspace, before code-server starts: plant files, seed databases, start more servers. */
  prepare?: (s: UiSetSetup) => X | Promise<X>;
  /** The profile's settings (on top of the quiet workbench defaults). */
  settings: Record<string, unknown> | ((s: UiSetSetup & { setup: X }) => Record<string, unknown>);
  /** The checks, in order. */
  run: (c: UiSetContext<K, X>) => Promise<void>;
}

/** The set's runner, as runner.mjs's UI_SETS call it. */
export type UiSetRunner = (o: UiCheckOptions) => Promise<void>;

export function defineUiSet<N extends Record<string, string>, K extends string = never, X = undefined>(
  def: UiSetDefinition<N, K, X>,
): UiSetRunner {
  return async (o) => {
    const timed = timedOf(o);
    const dirs = uiDirs(o, def.dir);
    const state = { ...(def.state ?? ({} as Record<K, boolean>)) };
    const requireState = stateGuard(state, (k) => (def.describeState ?? String)(k as K), def.stateSep);
    const closers: (() => unknown)[] = [];
    let fake: FakeServer | undefined;
    let session: UiSession | undefined;
    /** `fields` with the `fake` getter of UiSetSetup (a getter, so a set without a fake server reads it only by mistake). */
    const withFake = <T extends object>(fields: T): T & UiSetSetup =>
      Object.defineProperty({ o, dirs, onClose: (fn: () => unknown) => void closers.push(fn), ...fields }, 'fake', {
        get: (): FakeServer => {
          if (!fake) throw new Error(`${def.name}: this set has no fake server`);
          return fake;
        },
      }) as T & UiSetSetup;
    try {
      let setup: X;
      try {
        if (def.fake) fake = await startFakeOpenAI(def.fake);
        (def.workspace ?? h.createSampleWorkspace)(dirs.workspace);
        setup = (def.prepare ? await def.prepare(withFake({})) : undefined) as X;
        const settings = typeof def.settings === 'function' ? def.settings(withFake({ setup })) : def.settings;
        session = await startUiSession(o, { label: def.name, dirs, settings });
      } catch (e) {
        // Every check fails with the reason rather than the run losing count of them.
        const why = `the ${def.name} session did not start: ${(e as Error).message}`;
        for (const name of Object.values(def.checks)) await o.check(name, () => Promise.reject(new Error(why)));
        return;
      }
      const s = session;
      const page = s.page;
      await def.run(withFake({
        timed,
        session: s,
        page,
        shots: s.shots,
        shot: (name: string) => s.shot(name),
        openWorkbench: () => s.openWorkbench(),
        sidebar: async () => (await h.waitForWebview(page, VOX_WEBVIEW, { within: SIDEBAR, timeoutMs: 20_000, retries: 2 })).content,
        state,
        requireState,
        check: (name: string, fn: () => Promise<unknown>) => o.check(name, () => timed(name, fn), page),
        setup,
      }));
    } finally {
      if (session) await session.close();
      for (const fn of closers.reverse()) await Promise.resolve().then(fn).catch(() => {});
      if (fake) await fake.close().catch(() => {});
    }
  };
}
