// dom.js - a tiny element builder. Text is always set as text (never parsed
// as HTML), so names and messages from the API cannot inject markup.

/**
 * h('td', {class: 'x', 'data-testid': 'y', onclick: fn}, child, ...) builds
 * an element. Children may be strings, numbers, nodes, arrays or null/false
 * (skipped). Attributes starting with "on" become event listeners.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      el.className = value;
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces el's children with the given ones. */
export function replaceChildren(el, ...children) {
  const frag = document.createDocumentFragment();
  append(frag, children);
  el.replaceChildren(frag);
}

/** "12s", "4m", "3h", "2d" since an RFC 3339 time. */
export function age(timestamp, now = Date.now()) {
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return s + 's';
  if (s < 7200) return Math.floor(s / 60) + 'm';
  if (s < 172800) return Math.floor(s / 3600) + 'h';
  return Math.floor(s / 86400) + 'd';
}

/** ns/name, or name for cluster-scoped objects. */
export function objectKey(obj) {
  const md = obj?.metadata ?? {};
  return md.namespace ? md.namespace + '/' + md.name : md.name;
}

/** "1 object", "2 objects", "0 namespaces": a count with its noun, singular for 1. */
export function plural(n, one, many = one + 's') {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * A Kubernetes name as text that wraps only between its segments: a line
 * may break after each '-', '.', '_' or '/' (<wbr>), so a long quota or
 * namespace name wraps at its parts, not in the middle of one (CSS
 * overflow-wrap: anywhere breaks a single segment only when it is wider
 * than the line).
 */
export function breakable(name) {
  return String(name ?? '').split(/(?<=[-._/])/).flatMap((part, i) => (i ? [h('wbr'), part] : [part]));
}
