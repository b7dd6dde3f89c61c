// view-namespaces.js - the main view: one row per namespace that has
// ResourceQuotas, a meter per quota and resource, sortable and filterable.
// Only the first rows that match are built (plus "show more"), so 1,000
// namespaces with 3 quotas each render as fast as 50.

import { h, replaceChildren, age, plural, breakable } from './dom.js';
import { quotaResources, maxRatio, quotaPool, pendingQuotaName, pendingDetail } from './k8s.js';
import { meter, updateMeter, collectionNote } from './widgets.js';

const PAGE = 50; // rows built at first, and added by "show more"
const NEAR = 0.9; // "near limit": some resource at 90 % or more of its hard limit
const STRIP = 3; // pending pods named above the table

/**
 * Groups quotas by namespace: [{namespace, quotas: [{name, obj, resources, max}], max}].
 * `cache` (object -> entry) keeps each quota's parsed usage while its object
 * is unchanged: a watch event replaces one object, so a busy namespace costs
 * its own quotas' parsing, not all 3,000.
 */
function groupByNamespace(quotas, cache) {
  const byNs = new Map();
  for (const q of quotas.values()) {
    const ns = q.metadata.namespace;
    let entry = cache.get(q);
    if (!entry) {
      const resources = quotaResources(q);
      entry = { name: q.metadata.name, obj: q, resources, max: maxRatio(resources) };
      cache.set(q, entry);
    }
    if (!byNs.has(ns)) byNs.set(ns, []);
    byNs.get(ns).push(entry);
  }
  const rows = [];
  for (const [namespace, list] of byNs) {
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    rows.push({ namespace, quotas: list, max: Math.max(...list.map((q) => q.max)) });
  }
  return rows;
}

const byName = (a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0);
const byUsage = (a, b) => b.max - a.max || byName(a, b);

export function createNamespacesView(root, ctx) {
  const ui = { filter: '', near: false, sort: 'usage', limit: PAGE };
  let grouped = null; // cache of groupByNamespace, per quota collection version
  let groupedVersion = -1;
  const parsed = new WeakMap(); // quota object -> its entry (groupByNamespace)
  let firstRenderMarked = false;

  const filterInput = h('input', {
    id: 'ns-filter', type: 'search', placeholder: 'namespace or quota', 'data-testid': 'ns-filter',
    oninput: () => { ui.filter = filterInput.value.trim().toLowerCase(); ui.limit = PAGE; ctx.render(); },
  });
  const nearBox = h('input', {
    id: 'ns-near', type: 'checkbox', 'data-testid': 'ns-near',
    onchange: () => { ui.near = nearBox.checked; ui.limit = PAGE; ctx.render(); },
  });
  const sortSelect = h('select', {
    id: 'ns-sort', 'data-testid': 'ns-sort',
    onchange: () => { ui.sort = sortSelect.value; ui.limit = PAGE; ctx.render(); },
  }, h('option', { value: 'usage' }, 'highest usage'), h('option', { value: 'name' }, 'name'));
  const summary = h('span', { class: 'summary muted', 'data-testid': 'ns-summary', 'aria-live': 'polite' });
  const note = h('div');
  const strip = h('div', { class: 'pending-strip', 'data-testid': 'pending-strip', role: 'status', hidden: true });
  const tbody = h('tbody');
  const tableEl = h('table', { class: 'grid ns-table', 'data-testid': 'ns-table' },
    h('thead', null, h('tr', null,
      h('th', { scope: 'col', class: 'ns-col' }, 'Namespace'),
      h('th', { scope: 'col' }, 'Quotas: used / hard per resource'))),
    tbody);
  const more = h('button', {
    type: 'button', class: 'more', 'data-testid': 'ns-more', hidden: true,
    onclick: () => { ui.limit += PAGE; ctx.render(); },
  });

  replaceChildren(root,
    h('div', { class: 'toolbar' },
      h('label', { for: 'ns-filter' }, 'Filter'), filterInput,
      h('label', { class: 'check' }, nearBox, ' only near limit (≥ 90 %)'),
      h('label', { for: 'ns-sort' }, 'Sort by'), sortSelect,
      summary),
    note, strip, tableEl, more);

  /** The rows that pass the filter, sorted, each with the quotas to show. */
  function visibleRows(rows) {
    const out = [];
    for (const row of rows) {
      if (ui.near && row.max < NEAR) continue;
      let quotas = row.quotas;
      if (ui.filter && !row.namespace.toLowerCase().includes(ui.filter)) {
        quotas = quotas.filter((q) => q.name.toLowerCase().includes(ui.filter));
        if (quotas.length === 0) continue;
      }
      out.push(quotas === row.quotas ? row : { ...row, quotas });
    }
    return out.sort(ui.sort === 'name' ? byName : byUsage);
  }

  function quotaBlock(ns, q, pendingCount) {
    const pool = quotaPool(q.obj);
    return h('div', { class: 'quota', 'data-testid': 'quota', 'data-quota': q.name },
      h('div', { class: 'quota-name' },
        h('span', { class: 'name', title: `${ns}/${q.name}` }, breakable(q.name)),
        pool ? h('a', { class: 'tag pool', href: '#/pools', title: 'managed by ResourcePool ' + pool }, 'pool') : null,
        pendingCount ? h('a', {
          class: 'tag pending', href: '#/pending', 'data-testid': 'quota-pending',
          title: 'pods waiting on this quota',
        }, `${pendingCount} pending`) : null),
      h('div', { class: 'meters' },
        q.resources.length ? q.resources.map((r) => meter(r)) : h('span', { class: 'muted small' }, 'no limits')));
  }

  function namespaceRow(row, pending, namespaces) {
    const nsObj = namespaces?.items.get(row.namespace);
    const mode = nsObj?.metadata?.labels?.['quota.allot.dev/mode'];
    const terminating = nsObj?.status?.phase === 'Terminating';
    return h('tr', { 'data-testid': 'ns-row', 'data-namespace': row.namespace },
      h('th', { scope: 'row', class: 'ns-col' },
        h('span', { class: 'ns-name', title: row.namespace }, breakable(row.namespace)),
        mode ? h('span', { class: 'tag', title: 'quota.allot.dev/mode' }, mode + ' mode') : null,
        terminating ? h('span', { class: 'tag warn' }, 'terminating') : null),
      h('td', null, h('div', { class: 'quotas' },
        row.quotas.map((q) => quotaBlock(row.namespace, q, pending.get(`${row.namespace}/${q.name}`))))));
  }

  // Rows built last time, by namespace, with what they showed: a render
  // rebuilds only the rows whose quotas, namespace or pending pods changed,
  // and moves the others (a busy cluster changes a few rows, not fifty).
  let built = new Map();
  let builtNext = new Map();

  function cachedRow(row, pending, namespaces) {
    const nsObj = namespaces?.items.get(row.namespace);
    // shape: what the row is built of; values: what its meters say
    const shape = [nsObj?.metadata?.resourceVersion ?? '',
      ...row.quotas.map((q) => `${q.name}:${pending.get(`${row.namespace}/${q.name}`) ?? 0}:` +
        q.resources.map((r) => r.name).join(','))].join(' ');
    const values = row.quotas.map((q) => q.obj.metadata.resourceVersion).join(' ');
    const was = built.get(row.namespace);
    let tr = was?.tr;
    if (!was || was.shape !== shape || (was.values !== values && !updateRow(tr, row))) {
      tr = namespaceRow(row, pending, namespaces);
    }
    builtNext.set(row.namespace, { shape, values, tr });
    return tr;
  }

  /** The meters of a built row, given the row's new values in place (same shape). */
  function updateRow(tr, row) {
    const meters = tr.querySelectorAll('[data-testid=meter]');
    const resources = row.quotas.flatMap((q) => q.resources);
    if (meters.length !== resources.length) return false;
    return resources.every((r, i) => updateMeter(meters[i], r));
  }

  /** Puts `rows` in the table touching only what moved or changed: the
   * browser then lays out a few rows, not the whole table. */
  function patchRows(rows) {
    rows.forEach((tr, i) => {
      const cur = tbody.children[i];
      if (cur !== tr) tbody.insertBefore(tr, cur ?? null);
    });
    while (tbody.children.length > rows.length) tbody.lastElementChild.remove();
  }

  /** The pods waiting on quota, oldest first, named above the table so they are not missed. */
  function renderStrip() {
    const pods = ctx.collection('pending');
    const list = pods ? [...pods.items.values()] : [];
    strip.hidden = list.length === 0;
    if (strip.hidden) return;
    list.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    replaceChildren(strip,
      h('strong', null, list.length === 1 ? '1 pod waits on quota' : `${list.length} pods wait on quota`),
      list.slice(0, STRIP).map((pod) => h('span', { class: 'item' },
        h('span', { class: 'mono' }, `${pod.metadata.namespace}/${pod.metadata.name}`), ' → ',
        h('span', { class: 'mono' }, pendingQuotaName(pod) || '?'),
        h('span', { class: 'muted' }, ` ${pendingDetail(pod)} · ${age(pod.metadata.creationTimestamp)}`))),
      h('a', { href: '#/pending' }, list.length > STRIP ? `all ${list.length}…` : 'details'));
  }

  /** Marks the first render after login once it has painted, for the browser test and users' curiosity. */
  function markFirstRender() {
    if (firstRenderMarked) return;
    firstRenderMarked = true;
    requestAnimationFrame(() => setTimeout(() => {
      const mark = performance.mark('allot:first-render');
      document.body.dataset.firstRenderMs = String(Math.round(mark.startTime));
    }, 0));
  }

  function render() {
    renderStrip();
    const quotas = ctx.collection('quotas');
    const blocked = collectionNote(quotas, 'ResourceQuotas');
    replaceChildren(note, blocked);
    tableEl.hidden = !!blocked && quotas?.items.size === 0;
    if (!quotas || quotas.state === 'loading' || tableEl.hidden) {
      replaceChildren(tbody);
      summary.textContent = '';
      more.hidden = true;
      return;
    }
    if (groupedVersion !== quotas.version) {
      grouped = groupByNamespace(quotas.items, parsed);
      groupedVersion = quotas.version;
    }
    const rows = visibleRows(grouped);
    const shown = rows.slice(0, ui.limit);
    const namespaces = ctx.collection('namespaces');
    const pending = ctx.pendingByQuota();
    if (shown.length) {
      patchRows(shown.map((row) => cachedRow(row, pending, namespaces)));
    } else {
      replaceChildren(tbody, h('tr', null, h('td', { colspan: 2, class: 'muted empty', 'data-testid': 'ns-empty' },
        grouped.length ? 'No namespace matches the filter.' : 'No ResourceQuotas yet.')));
    }
    [built, builtNext] = [builtNext, new Map()];
    const near = grouped.filter((r) => r.max >= NEAR).length;
    summary.dataset.namespaces = String(grouped.length);
    summary.dataset.shown = String(shown.length);
    const counted = namespaces?.state === 'live'
      ? `${grouped.length} of ${plural(namespaces.items.size, 'namespace')}`
      : plural(grouped.length, 'namespace');
    summary.textContent = `${counted} with quotas · ${plural(quotas.items.size, 'quota')} · ` +
      `${near} near limit` + (rows.length !== grouped.length ? ` · ${rows.length} match` : '');
    const rest = rows.length - shown.length;
    more.hidden = rest <= 0;
    more.textContent = `Show ${Math.min(PAGE, rest)} more (${rest} not shown)`;
    markFirstRender();
  }

  return { needs: ['namespaces'], reads: ['quotas', 'namespaces', 'pending'], render };
}
