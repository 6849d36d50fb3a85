// First: a locale Intl accepts, before any module formats with it.
import './lib/locale';
import './app.css';
import { mount } from 'svelte';
import App from './App.svelte';
import { createAppContext } from './lib/app';
import { applyTheme, theme } from './lib/theme';

theme.subscribe(applyTheme);
const ctx = createAppContext();
mount(App, { target: document.getElementById('app')!, props: { ctx } });
