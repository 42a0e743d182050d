/**
 * Entry of the "Compare branches" editor tab (bundled to dist/compare.js + dist/compare.css by
 * esbuild.mjs): mounts Compare.svelte, which asks its host for the data (`ready`) and renders
 * what it is posted. No engine session here: the extension sends the data of `compareBranches`.
 */
import { mount } from 'svelte';
import Compare from './Compare.svelte';
import '../styles.css';

interface VsCodeApi { postMessage(message: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();
const target = document.getElementById('app') ?? document.body;
mount(Compare, { target, props: { post: (m: unknown) => api.postMessage(m), listen: (fn: (data: unknown) => void) => window.addEventListener('message', (e) => fn(e.data)) } });
