// widgets.js - pieces several views share: usage meters and the notes shown
// in place of a section whose collection is loading, refused or missing.

import { h } from './dom.js';
import { level } from './quantity.js';

/** Percent width of a bar for a ratio, clamped to 0..100 (over 100 % shows full). */
export function percent(ratio) {
  if (!Number.isFinite(ratio)) return Number.isNaN(ratio) ? 0 : 100;
  return Math.max(0, Math.min(100, ratio * 100));
}

function percentText(ratio) {
  if (Number.isNaN(ratio)) return 'unknown';
  if (!Number.isFinite(ratio)) return 'over the limit';
  return Math.round(ratio * 100) + ' %';
}

/**
 * A bar with a fill of the ratio's colour; `extra` (a ratio, optional) is a
 * second hatched segment after the fill, e.g. the pending demand. Widths go
 * through the CSSOM (el.style), which the page's CSP allows.
 */
export function bar(ratio, label, extra = 0) {
  const fill = h('div', { class: 'fill' });
  fill.style.width = percent(ratio) + '%';
  const el = h(
    'div',
    {
      class: 'bar',
      role: 'meter',
      'aria-valuemin': 0,
      'aria-valuemax': 100,
      'aria-valuenow': Math.round(percent(ratio)),
      'aria-label': label,
    },
    fill,
  );
  if (extra > 0 && Number.isFinite(ratio)) {
    const more = h('div', { class: 'fill extra' });
    more.style.left = percent(ratio) + '%';
    more.style.width = Math.max(0, percent(ratio + extra) - percent(ratio)) + '%';
    el.appendChild(more);
  }
  return el;
}

/**
 * One resource's meter: "requests.cpu  1500m / 2" over a coloured bar. The
 * strings are the server's own; the ratio only sizes and colours the bar.
 */
export function meter({ name, used, hard, ratio }, { testid = 'meter', extra = 0 } = {}) {
  const usedText = used ?? '–';
  return h(
    'div',
    {
      class: 'meter lvl-' + level(ratio),
      'data-testid': testid,
      'data-resource': name,
      'data-level': level(ratio),
      title: `${name}: ${usedText} of ${hard} (${percentText(ratio)})`,
    },
    h('div', { class: 'meter-label' }, h('span', { class: 'res' }, name), ' ',
      h('span', { class: 'val', 'data-testid': 'meter-value' }, `${usedText} / ${hard}`)),
    bar(ratio, `${name} ${usedText} of ${hard}`, extra),
  );
}

/**
 * Gives a meter built by meter() for the same resource a new value, in place:
 * a live page changes a few texts and widths instead of building the row
 * again (which costs the browser a layout and paint of the whole row).
 * Returns false when the meter has parts meter() would not build now (a
 * pending-demand segment), so the caller builds it afresh.
 */
export function updateMeter(el, { name, used, hard, ratio }) {
  const fill = el.querySelector('.bar > .fill');
  if (!fill || el.querySelector('.fill.extra')) return false;
  const usedText = used ?? '–';
  const lvl = level(ratio);
  if (el.dataset.level !== lvl) {
    el.className = 'meter lvl-' + lvl;
    el.dataset.level = lvl;
  }
  el.title = `${name}: ${usedText} of ${hard} (${percentText(ratio)})`;
  const val = el.querySelector('.val');
  const text = `${usedText} / ${hard}`;
  if (val.textContent !== text) val.textContent = text;
  const barEl = fill.parentElement;
  barEl.setAttribute('aria-valuenow', Math.round(percent(ratio)));
  barEl.setAttribute('aria-label', `${name} ${usedText} of ${hard}`);
  fill.style.width = percent(ratio) + '%';
  return true;
}

const STATE_TEXT = {
  loading: 'Loading…',
  forbidden: 'No access: this token may not list these objects.',
  unavailable: 'Not served by this server.',
};

/**
 * A note for a collection that has nothing to show yet or may not be shown,
 * or null when its data can be rendered. `what` names the objects.
 */
export function collectionNote(collection, what) {
  if (!collection) return h('p', { class: 'note' }, 'Loading…');
  const { state, error } = collection;
  if (state === 'forbidden' || state === 'unavailable') {
    return h('p', { class: 'note ' + state, 'data-testid': 'no-access', role: 'note' },
      `${what}: ${STATE_TEXT[state]}`, error ? h('span', { class: 'muted' }, ` (${error})`) : null);
  }
  if (state === 'loading') return h('p', { class: 'note', 'data-testid': 'loading' }, STATE_TEXT.loading);
  if (state === 'error' && collection.items.size === 0) {
    return h('p', { class: 'note error', role: 'alert' }, `${what}: ${error} — retrying…`);
  }
  return null;
}

/** "2 / 5" style key-value list of a ResourceList ({cpu: "1", ...}) as text. */
export function resourceList(list) {
  const entries = Object.entries(list ?? {});
  if (entries.length === 0) return h('span', { class: 'muted' }, 'none');
  return entries.map(([k, v], i) => [i ? ', ' : '', h('span', { class: 'res' }, k), '=', v]);
}

/** A table with a caption-less header row: headers is a list of strings. */
export function table(testid, headers, rows, className = '') {
  return h('table', { class: 'grid ' + className, 'data-testid': testid },
    h('thead', null, h('tr', null, headers.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', null, rows));
}
