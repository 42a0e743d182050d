/**
 * A stand-in for the `vscode` module, enough for Vox's activate() and its EngineHost to run in
 * plain Node: configuration reads the contributed defaults, secrets live in memory, the
 * registrations return disposables, events never fire. What the bench does not touch is a no-op.
 * Installed with `installVscodeStub()` before dist/extension.js is required.
 */
import * as fs from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';

type Listener<T> = (e: T) => void;

class Disposable {
  constructor(private readonly fn: () => void = () => {}) {}
  static from(...ds: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => ds.forEach((d) => d.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (l: Listener<T>): Disposable => {
    this.listeners.add(l);
    return new Disposable(() => this.listeners.delete(l));
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

const noopEvent = (): Disposable => new Disposable();

class Uri {
  private constructor(readonly scheme: string, readonly fsPath: string) {}
  get path(): string {
    return this.fsPath;
  }
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static joinPath(u: Uri, ...parts: string[]): Uri {
    return new Uri(u.scheme, path.join(u.fsPath, ...parts));
  }
  static from(c: { scheme: string; path?: string }): Uri {
    return new Uri(c.scheme, c.path ?? '');
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
}

/** The `vox.*` defaults from package.json's contributes.configuration. */
function configDefaults(root: string): Record<string, unknown> {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const props: Record<string, { default?: unknown }> = pkg.contributes.configuration.properties;
  return Object.fromEntries(Object.entries(props).map(([k, v]) => [k.replace(/^vox\./, ''), v.default]));
}

export interface StubContext {
  subscriptions: { dispose(): unknown }[];
  extensionPath: string;
  extensionUri: Uri;
  globalStorageUri: Uri;
  secrets: { get(k: string): Promise<string | undefined>; store(k: string, v: string): Promise<void>; delete(k: string): Promise<void>; onDidChange: typeof noopEvent };
}

export function makeContext(extensionPath: string, storage: string): StubContext {
  const secrets = new Map<string, string>();
  return {
    subscriptions: [],
    extensionPath,
    extensionUri: Uri.file(extensionPath),
    globalStorageUri: Uri.file(storage),
    secrets: {
      get: async (k) => secrets.get(k),
      store: async (k, v) => void secrets.set(k, v),
      delete: async (k) => void secrets.delete(k),
      onDidChange: noopEvent,
    },
  };
}

/** Makes `require('vscode')` return the stand-in; `workspace` is the folder Vox sees as open. */
export function installVscodeStub(root: string, workspace: string): void {
  const defaults = configDefaults(root);
  const log = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, append() {}, appendLine() {}, show() {}, hide() {}, clear() {}, dispose() {} };
  const vscode = {
    Disposable,
    EventEmitter,
    Uri,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    TreeItem: class {
      constructor(readonly label: string, readonly collapsibleState?: number) {}
    },
    ThemeIcon: Object.assign(class {
      constructor(readonly id: string) {}
    }, { File: {}, Folder: {} }),
    MarkdownString: class {
      constructor(readonly value = '') {}
    },
    CancellationTokenSource: class {
      token = { isCancellationRequested: false, onCancellationRequested: noopEvent };
      cancel(): void {}
      dispose(): void {}
    },
    window: {
      createOutputChannel: () => log,
      createStatusBarItem: () => ({ show() {}, hide() {}, dispose() {} }),
      registerWebviewViewProvider: () => new Disposable(),
      registerTreeDataProvider: () => new Disposable(),
      showInformationMessage: async () => undefined,
      showWarningMessage: async () => undefined,
      showErrorMessage: async () => undefined,
      activeTextEditor: undefined,
    },
    workspace: {
      workspaceFolders: [{ uri: Uri.file(workspace), name: path.basename(workspace), index: 0 }],
      getConfiguration: () => ({
        get: (k: string, d?: unknown) => defaults[k] ?? d,
        inspect: (k: string) => ({ key: k, defaultValue: defaults[k] }),
        update: async () => undefined,
        has: (k: string) => k in defaults,
      }),
      onDidChangeConfiguration: noopEvent,
      onDidSaveTextDocument: noopEvent,
      onDidCreateFiles: noopEvent,
      onDidDeleteFiles: noopEvent,
      onDidRenameFiles: noopEvent,
      registerTextDocumentContentProvider: () => new Disposable(),
      asRelativePath: (p: string) => p,
    },
    commands: {
      registerCommand: () => new Disposable(),
      executeCommand: async () => undefined,
    },
    lm: { selectChatModels: async () => [] },
    // No VS Code install behind the stand-in: ripgrep is found on PATH (Debian's), as for the CLI.
    env: { appRoot: path.join(root, '.no-vscode-app-root'), language: 'en', machineId: 'bench' },
  };
  const mod = Module as unknown as { _load: (req: string, parent: unknown, isMain: boolean) => unknown };
  const load = mod._load;
  mod._load = function (req: string, parent: unknown, isMain: boolean) {
    if (req === 'vscode') return vscode;
    return load.call(this, req, parent, isMain);
  };
}
