import { debounce, h } from './dom.js';

/** Suggestions shown at once: enough to pick from, few enough that 100 k names stay quick to draw. */
export const SUGGESTIONS = 50;

/**
 * An input with a suggestion list: asks `source` (debounced) for what was typed, arrow keys and
 * Enter pick, Escape closes. A newer answer always replaces an older one.
 */
export function typeahead(opts: { name: string; placeholder: string; value?: string; source: (typed: string) => Promise<string[]>; onPick: (value: string) => void }): { el: HTMLElement; input: HTMLInputElement } {
  const input = h('input', { name: opts.name, placeholder: opts.placeholder, autocomplete: 'off', spellcheck: 'false', value: opts.value ?? '' });
  const list = h('ul', { class: 'suggest', role: 'listbox', hidden: true });
  let items: string[] = [];
  let active = -1;
  let asked = 0;
  /** What was last picked: a suggestion answer arriving after the pick must not reopen the list. */
  let picked: string | null = null;

  const render = () => {
    list.replaceChildren(
      ...items.map((v, i) =>
        h('li', { role: 'option', class: i === active ? 'active' : null, onmousedown: (e: Event) => (e.preventDefault(), pick(v)) }, v),
      ),
    );
    list.hidden = items.length === 0;
  };
  const pick = (v: string) => {
    picked = v;
    input.value = v;
    items = [];
    render();
    opts.onPick(v);
  };
  const ask = debounce(120, (typed: string) => {
    const n = ++asked;
    opts.source(typed).then(
      (got) => {
        if (n !== asked || document.activeElement !== input || input.value === picked) return;
        items = got.slice(0, SUGGESTIONS);
        active = -1;
        render();
      },
      () => undefined,
    );
  });
  input.addEventListener('input', () => {
    picked = null;
    ask(input.value);
  });
  input.addEventListener('focus', () => ask(input.value));
  input.addEventListener('blur', () => {
    items = [];
    render();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (!items.length) return;
      active = (active + (e.key === 'ArrowDown' ? 1 : -1) + items.length) % items.length;
      render();
      e.preventDefault();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      pick(active >= 0 ? items[active]! : input.value.trim());
    } else if (e.key === 'Escape') {
      items = [];
      render();
    }
  });
  return { el: h('span', { class: 'typeahead' }, input, list), input };
}
