/**
 * Entry of the chat webview (bundled to dist/webview.js, styles to dist/webview.css). Registers
 * the few @vscode-elements custom elements the UI uses, connects to the extension host through
 * `acquireVsCodeApi()` and mounts the Svelte app into #app.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import { mount } from 'svelte';
import App from './App.svelte';
import { createVsCodeBridge } from './lib/vscode-bridge';
import { setCodeActionSink } from './lib/code/code-actions';
import './styles.css';

const target = document.getElementById('app') ?? document.body;
const bridge = createVsCodeBridge(window);
// Code blocks post Insert at Cursor / Apply to File straight to the host (no engine command).
setCodeActionSink((m) => bridge.sendCodeAction?.(m));
mount(App, { target, props: { bridge } });
