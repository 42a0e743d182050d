/**
 * Settings: the model and the kept UI choices (`getSettings` at start; a `settings` update when
 * the host connects an engine session or the settings change — every feature's `reconnected`
 * follows it), choosing a model and keeping a UI choice, and loading the chosen model ahead of the
 * first prompt (`prepareModel`: a local model takes seconds to load, a prompt after that
 * milliseconds; sent for each new session and each change of model; a failure shows on the first
 * prompt).
 */
import type { CommandResult, UiPreferenceKey } from '../../../../src/protocol/commands/index';
import { NO_UI_PREFERENCES, toSettings } from '../settings-state';
import { defineFeature } from './feature';

export const settingsFeature = defineFeature({
  name: 'settings',
  install(ctx) {
    const m = ctx.model;
    /** The model last sent to `prepareModel`. */
    let preparedModel: string | null = null;
    const prepareModel = (model: string, fresh: boolean): void => {
      if (!fresh && model === preparedModel) return;
      preparedModel = model;
      ctx.send({ type: 'prepareModel', model });
    };
    const answered = (value: CommandResult<'getSettings'>): void => {
      const st = toSettings(value);
      m.settings = st;
      prepareModel(st.model, false);
    };
    return {
      intents: {
        setModel(ref: string): void {
          if (ref.length === 0 || ref === m.settings?.model) return;
          ctx.send({ type: 'setModel', model: ref });
        },
        /** Keeps a UI choice across reloads (in the host, through the engine); shown at once. */
        setUiPreference(key: UiPreferenceKey, value: boolean): void {
          const s = m.settings;
          if (s) s.ui = { ...(s.ui ?? NO_UI_PREFERENCES), [key]: value };
          ctx.send({ type: 'setUiPreference', key, value });
        },
      },
      updates: {
        settings(u) {
          // Unsolicited: a new engine session (its subscriptions are ours to redo), or the settings changed.
          m.settings = toSettings(u);
          prepareModel(u.model, true);
          ctx.reconnected();
        },
      },
      results: {
        getSettings: answered,
        setModel: answered,
        setUiPreference: answered,
      },
      start: () => void ctx.send({ type: 'getSettings' }),
    };
  },
});
