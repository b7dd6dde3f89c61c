// view-custom.js - CustomQuotas and GlobalCustomQuotas: limit, used (status)
// and the objects they count (status.claims).

import { h, replaceChildren } from './dom.js';
import { condition } from './k8s.js';
import { usageRatio } from './quantity.js';
import { meter, collectionNote, table } from './widgets.js';

const CLAIMS_SHOWN = 50; // a global quota may count 100,000 pods: list the first few

function sourcesText(cq) {
  return (cq.spec?.sources ?? [])
    .map((s) => [s.kind, s.op, s.path ?? s.expression ?? ''].filter(Boolean).join(' '))
    .join('; ') || 'no sources';
}

// which quotas' object lists the user opened, so a re-render keeps them open
const opened = new Set();

function claimsCell(cq) {
  const claims = cq.status?.claims ?? [];
  if (claims.length === 0) return h('span', { class: 'muted small' }, 'none');
  const items = claims.slice(0, CLAIMS_SHOWN).map((c) => h('li', { 'data-testid': 'cq-claim' },
    `${c.kind} ${c.namespace ? c.namespace + '/' : ''}${c.name}`, h('span', { class: 'muted' }, ` ${c.usage}`)));
  if (claims.length > CLAIMS_SHOWN) items.push(h('li', { class: 'muted' }, `and ${claims.length - CLAIMS_SHOWN} more`));
  const key = `${cq.kind}/${cq.metadata.namespace ?? ''}/${cq.metadata.name}`;
  const details = h('details', { open: opened.has(key) }, h('summary', null, `${claims.length} objects`),
    h('ul', { class: 'claims' }, items));
  details.addEventListener('toggle', () => (details.open ? opened.add(key) : opened.delete(key)));
  return details;
}

function quotaRow(cq) {
  const md = cq.metadata;
  const limit = String(cq.spec?.limit ?? '');
  const used = cq.status?.usage?.used;
  const ready = condition(cq, 'Ready');
  return h('tr', { 'data-testid': 'cq-row', 'data-kind': cq.kind, 'data-namespace': md.namespace ?? '', 'data-name': md.name },
    h('td', null, h('span', { class: 'tag' }, cq.kind === 'GlobalCustomQuota' ? 'global' : 'namespace')),
    h('td', null, md.namespace ?? (cq.status?.namespaces ?? []).join(', ')),
    h('th', { scope: 'row' }, md.name),
    h('td', { class: 'meter-cell' }, meter({ name: 'used', used, hard: limit, ratio: usageRatio(used ?? '0', limit) })),
    h('td', { class: 'small' }, sourcesText(cq),
      ready && ready.status !== 'True' ? h('div', { class: 'error' }, `${ready.reason}: ${ready.message}`) : null),
    h('td', null, claimsCell(cq)));
}

export function createCustomView(root, ctx) {
  const body = h('div');
  replaceChildren(root, body);

  function render() {
    const rows = [];
    const notes = [];
    for (const [id, what] of [['globalcustomquotas', 'GlobalCustomQuotas'], ['customquotas', 'CustomQuotas']]) {
      const c = ctx.collection(id);
      const note = collectionNote(c, what);
      if (note) notes.push(note);
      else rows.push(...[...c.items.values()].sort((a, b) => ((a.metadata.namespace ?? '') + '/' + a.metadata.name)
        .localeCompare((b.metadata.namespace ?? '') + '/' + b.metadata.name)));
    }
    replaceChildren(body, notes,
      rows.length
        ? table('cq-table', ['Scope', 'Namespace(s)', 'Name', 'Used / limit', 'Sources', 'Counted objects'], rows.map(quotaRow))
        : h('p', { class: 'muted', 'data-testid': 'cq-empty' }, 'No custom quotas.'));
  }

  const reads = ['customquotas', 'globalcustomquotas'];
  return { needs: reads, reads, render };
}
