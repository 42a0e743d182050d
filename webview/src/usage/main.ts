/**
 * Entry of the "Vox: Usage" editor tab (bundled to dist/usage.js + dist/usage.css by esbuild.mjs):
 * mounts Usage.svelte, which asks its host for the report (`ready`) and renders what it is
 * posted. No engine session here: the extension sends the result of `getUsage`.
 */
import { mount } from 'svelte';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import Usage from './Usage.svelte';
import type { UsageRequest } from './data';
import '../styles.css';

interface VsCodeApi { postMessage(message: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();
const target = document.getElementById('app') ?? document.body;
mount(Usage, { target, props: { post: (m: UsageRequest) => api.postMessage(m), listen: (fn: (data: unknown) => void) => window.addEventListener('message', (e) => fn(e.data)) } });
