import './style.css';
import { apiKey, forgetKey, onKeyChange } from './api.js';
import { clear, h } from './dom.js';
import type { View } from './views/common.js';
import { ExploreView } from './views/explore.js';
import { HealthView } from './views/health.js';
import { LatestView } from './views/latest.js';
import { RecordsView } from './views/records.js';

const make: Record<string, (link: URLSearchParams) => View> = {
  explore: (link) => new ExploreView(link),
  records: () => new RecordsView(),
  latest: () => new LatestView(),
  health: () => new HealthView(),
};
const views = new Map<string, View>();
let current: View | null = null;
const main = document.getElementById('view')!;

/** Hash routing (#explore, #records, ...): views are built once and keep their state when left. */
function route(): void {
  const [path = '', link = ''] = location.hash.slice(1).split('?');
  const name = Object.hasOwn(make, path) ? path : 'explore';
  let view = views.get(name);
  if (!view) views.set(name, (view = make[name]!(new URLSearchParams(link))));
  current?.stop();
  current = view;
  main.replaceChildren(view.el);
  view.start();
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', (a as HTMLElement).dataset['view'] === name);
}

function keyStatus(): void {
  const el = document.getElementById('key-status')!;
  clear(el, apiKey() ? h('button', { type: 'button', name: 'forget-key', title: 'Forget the API key of this tab', onclick: forgetKey }, 'Forget key') : null);
}

window.addEventListener('hashchange', route);
onKeyChange(keyStatus);
keyStatus();
route();
