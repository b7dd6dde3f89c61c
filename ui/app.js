// app.js - the dashboard's shell: token login, the views (hash routes), the
// collections each view watches, and rendering batched per animation frame.
//
// Why not watch everything all the time: allotd speaks HTTP/1.1, where a
// browser opens at most 6 connections to one origin, and every open watch
// holds one. The quotas and the pending pods (which every view uses) are
// always watched; each view adds its own (at most two more), so a request
// such as the What-if review always finds a free connection.
//
// A token that may not list quotas across namespaces (a namespace admin)
// sees the namespaces it names at login and its ServiceAccount's own
// (scope.js): each collection is then listed and watched per namespace, at
// most MAX_WATCHES watches in all, the current view's collections first; a
// namespace past that is listed when the view opens, not watched.

import { setToken, onUnauthorized, whoAmI, ApiError } from './api.js';
import { Collection, NamespacedCollection, StaticCollection } from './watch.js';
import {
  discoverScope, groupResource, parseNamespaces, rulesAllow, saveNamespaces, savedNamespaces,
} from './scope.js';
import { h, replaceChildren } from './dom.js';
import { pendingQuotaName } from './k8s.js';
import { createNamespacesView } from './view-namespaces.js';
import { createPendingView, pendingByQuota } from './view-pending.js';
import { createPoolsView } from './view-pools.js';
import { createCustomView } from './view-custom.js';
import { createWhatIfView } from './view-whatif.js';

const TOKEN_KEY = 'allot.token';
const CAPSULE = '/apis/capsule.clastix.io/v1beta2';

// Every collection the dashboard may watch. The pending pods come from the
// status.pendingOnQuota field selector; a server without it answers 400 and
// the Pending pods are watched instead, keeping those whose PodScheduled
// condition says they wait on a quota.
const SOURCES = {
  quotas: { path: '/api/v1/resourcequotas', namespaced: true },
  pending: {
    path: '/api/v1/pods?fieldSelector=' + encodeURIComponent('status.pendingOnQuota!='),
    fallbackPaths: ['/api/v1/pods?fieldSelector=' + encodeURIComponent('status.phase=Pending')],
    keep: (pod, degraded) => !degraded || pendingQuotaName(pod) !== '',
    namespaced: true,
  },
  namespaces: { path: '/api/v1/namespaces' },
  pools: { path: `${CAPSULE}/resourcepools` },
  claims: { path: `${CAPSULE}/resourcepoolclaims`, namespaced: true },
  customquotas: { path: `${CAPSULE}/customquotas`, namespaced: true },
  globalcustomquotas: { path: `${CAPSULE}/globalcustomquotas` },
};
const ALWAYS = ['quotas', 'pending'];
const MAX_WATCHES = 4; // of the browser's 6 connections: 2 left for lists and reviews
// what a namespace must let the token list for the dashboard to show it
const NAMESPACED = Object.values(SOURCES).filter((s) => s.namespaced).map((s) => groupResource(s.path));

const $ = (id) => document.getElementById(id);

const app = {
  collections: new Map(), // id -> running Collection (or NamespacedCollection)
  plans: new Map(), // id -> how it runs for a scoped token (JSON), to see a change
  scope: { cluster: true }, // scope.js discoverScope(): everything, or some namespaces
  user: '',
  views: null, // name -> view, built at login
  current: '',
  frame: 0,
  timer: 0, // a render waiting for RENDER_EVERY_MS to pass
  lastRender: -Infinity,
  events: 0, // watch events since eventsSince (ms): more than BUSY_EVENTS a second throttles
  eventsSince: 0,
  busyUntil: 0,
  rendered: '', // what the current view last rendered from (view and collection versions)
  ticker: 0,
  pendingCache: { version: -1, byQuota: new Map() },
};

// ---- rendering, batched: any number of events in a frame cause one render.
// A busy cluster (more than BUSY_EVENTS events a second) is rendered at most
// every RENDER_EVERY_MS: still live within a second, without the page taking
// a core of the machine it watches (each render costs the browser a layout
// and paint; at 60 a second that is most of a core). Measured with
// bench/dashboard.sh (1,000 namespaces x 3 quotas, 20,000 creates): at 500 ms
// the renderer took 0.21-0.24 s of CPU a run, at 5 s 0.05 s.

const BUSY_EVENTS = 20;
const RENDER_EVERY_MS = 900;

/** Whether events come fast: more than BUSY_EVENTS within a second, and for
 * two seconds after (so a steady stream stays throttled from its start). */
function busy(now) {
  if (now - app.eventsSince >= 1000) {
    app.eventsSince = now;
    app.events = 0;
  }
  if (++app.events > BUSY_EVENTS) app.busyUntil = now + 2000;
  return now < app.busyUntil;
}

function scheduleRender(urgent = false) {
  if (urgent && app.timer) {
    clearTimeout(app.timer);
    app.timer = 0;
  }
  const now = performance.now();
  const throttle = !urgent && busy(now);
  if (app.frame || app.timer) return;
  const wait = throttle ? app.lastRender + RENDER_EVERY_MS - now : 0;
  if (wait <= 0) {
    app.frame = requestAnimationFrame(renderNow);
  } else {
    app.timer = setTimeout(() => { app.timer = 0; app.frame = requestAnimationFrame(renderNow); }, wait);
  }
}

function renderNow() {
  app.frame = 0;
  app.lastRender = performance.now();
  if (!app.views) return;
  renderHeader();
  // a view is rebuilt only when what it reads changed (or it asked to be),
  // so events for other views leave it alone (open <details>, selections)
  const view = app.views[app.current];
  const seen = app.current + ' ' + view.reads.map((id) => `${id}:${app.collections.get(id)?.version ?? '-'}`).join(' ');
  if (seen === app.rendered) return;
  app.rendered = seen;
  view.render();
}

/** For a view whose own controls changed (filter, sort): render it even if no data changed. */
function renderView() {
  app.rendered = '';
  scheduleRender(true);
}

function renderHeader() {
  const states = [...app.collections.values()].map((c) => c.state);
  let state = 'live';
  if (states.some((s) => s === 'reconnecting' || s === 'error')) state = 'reconnecting';
  else if (states.some((s) => s === 'loading')) state = 'connecting';
  const conn = $('conn');
  conn.dataset.state = state;
  // a scoped token with more namespaces than watches: some lists are snapshots
  $('conn-text').textContent = state === 'live' && states.includes('listed') ? 'partly live' : state;
  const last = Math.max(0, ...[...app.collections.values()].map((c) => c.lastData));
  $('updated').textContent = last ? 'updated ' + new Date(last).toLocaleTimeString() : 'no data yet';
  const pending = app.collections.get('pending');
  $('pending-count').textContent = pending && pending.state !== 'forbidden' ? String(pending.items.size) : '–';
  for (const a of document.querySelectorAll('.tabs a')) {
    if (a.dataset.view === app.current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// ---- collections: started when a view needs them, stopped when none does

/**
 * How each wanted collection runs for a scoped token: per namespace that lets
 * it list, watched while watches are left (the current view's collections
 * first), else listed once. A cluster-scoped one (pools, global custom
 * quotas) is tried cluster-wide, watched only if some rules review allows it;
 * the namespaces are the ones the token names.
 */
function scopedPlans(wanted) {
  const view = app.views?.[app.current];
  const order = [...new Set([...(view?.reads ?? []), ...wanted])].filter((id) => wanted.includes(id));
  const namespaces = app.scope.namespaces;
  let slots = MAX_WATCHES;
  const take = (may) => {
    if (!may || slots === 0) return false;
    slots--;
    return true;
  };
  const plans = new Map();
  for (const id of order) {
    const source = SOURCES[id];
    const { group, resource } = groupResource(source.path);
    const allows = (ns, verb) => rulesAllow(ns.rules, verb, group, resource);
    if (id === 'namespaces') plans.set(id, { static: namespaces.map((ns) => ns.name) });
    else if (!source.namespaced) plans.set(id, { watch: take(namespaces.some((ns) => allows(ns, 'watch'))) });
    else {
      plans.set(id, {
        namespaces: namespaces.filter((ns) => allows(ns, 'list'))
          .map((ns) => ({ name: ns.name, watch: take(allows(ns, 'watch')) })),
      });
    }
  }
  return plans;
}

function newCollection(id, plan) {
  const source = { ...SOURCES[id], onChange: scheduleRender };
  if (!plan) return new Collection(source);
  if (plan.static) {
    return new StaticCollection(plan.static.map((name) => ({ kind: 'Namespace', metadata: { name } })));
  }
  if (plan.namespaces) {
    const where = app.scope.namespaces.map((ns) => ns.name).join(', ') || 'no namespace named';
    return new NamespacedCollection({
      ...source, namespaces: plan.namespaces,
      noAccess: `may not list ${groupResource(source.path).resource} in any namespace it names (${where})`,
    });
  }
  return new Collection({ ...source, watch: plan.watch });
}

function syncCollections() {
  const wanted = [...new Set([...ALWAYS, ...(app.views?.[app.current]?.needs ?? [])])];
  const plans = app.scope.cluster ? new Map() : scopedPlans(wanted);
  for (const [id, c] of app.collections) {
    const plan = JSON.stringify(plans.get(id) ?? null);
    // a scoped collection that is listed once is listed again when a view opens
    const snapshot = c.state === 'listed' || c.subs?.some((sub) => !sub.watch);
    if (!wanted.includes(id) || plan !== app.plans.get(id) || snapshot) {
      c.stop(); // frees its connection; the data would go stale, so it is dropped
      app.collections.delete(id);
    }
  }
  for (const id of wanted) {
    if (app.collections.has(id)) continue;
    const c = newCollection(id, plans.get(id));
    app.collections.set(id, c);
    app.plans.set(id, JSON.stringify(plans.get(id) ?? null));
    c.start();
  }
}

function stopCollections() {
  for (const c of app.collections.values()) c.stop();
  app.collections.clear();
  app.plans.clear();
}

// ---- the namespaces a scoped token shows, and the form to name them

function renderScope() {
  const bar = $('scope');
  const scope = app.scope;
  bar.hidden = scope.cluster;
  if (scope.cluster) return;
  const input = h('input', {
    id: 'scope-namespaces', type: 'text', spellcheck: 'false', 'data-testid': 'scope-input',
    value: savedNamespaces(), placeholder: 'team-a, team-b', 'aria-label': 'Namespaces to show',
  });
  const shown = scope.namespaces.map((ns) => ns.name);
  replaceChildren(bar,
    h('span', { 'data-testid': 'scope-text' },
      'This token may not list quotas across namespaces. ',
      shown.length
        ? ['Showing ', h('strong', { 'data-testid': 'scope-namespaces' }, shown.join(', ')), '.']
        : h('strong', null, 'Name the namespaces you work in to see them.'),
      scope.denied.length
        ? h('span', { class: 'muted', 'data-testid': 'scope-denied' }, ` No access to ${scope.denied.join(', ')}.`)
        : null,
      scope.truncated ? h('span', { class: 'muted' }, ` (${scope.truncated} more not checked)`) : null),
    h('form', {
      class: 'scope-form', 'data-testid': 'scope-form',
      onsubmit: (event) => {
        event.preventDefault();
        rescope(input.value).catch((err) => showLogin(`Cannot check the namespaces: ${err.message}`));
      },
    }, input, h('button', { type: 'submit', 'data-testid': 'scope-submit' }, 'Show')));
}

/** Finds the token's scope for the named namespaces, and starts over the views' collections. */
async function rescope(namedText) {
  const named = parseNamespaces(namedText);
  saveNamespaces(named);
  app.scope = await findScope(named);
  stopCollections();
  renderScope();
  route();
}

async function findScope(named) {
  const resources = NAMESPACED;
  try {
    return await discoverScope(app.user, named, resources);
  } catch (err) {
    if (err instanceof ApiError && err.code === 401) throw err;
    // a server without the authorization API: list cluster-wide, as before
    return { cluster: true };
  }
}

/** What views read: collections, and derived data cached per version. */
const ctx = {
  collection: (id) => app.collections.get(id),
  render: renderView,
  /** "namespace/quota" -> number of pods waiting on it. */
  pendingByQuota() {
    const pending = app.collections.get('pending');
    if (!pending) return new Map();
    if (app.pendingCache.version !== pending.version) {
      const counts = new Map();
      for (const [key, pods] of pendingByQuota(pending.items)) counts.set(key, pods.length);
      app.pendingCache = { version: pending.version, byQuota: counts };
    }
    return app.pendingCache.byQuota;
  },
  /** A namespace that has a quota, for the What-if example. */
  someNamespace() {
    const q = app.collections.get('quotas')?.items.values().next().value;
    return q?.metadata?.namespace;
  },
};

// ---- views and routing (#/namespaces, #/pending, ...)

const VIEW_NAMES = ['namespaces', 'pending', 'pools', 'custom', 'whatif'];

function buildViews() {
  return {
    namespaces: createNamespacesView($('view-namespaces'), ctx),
    pending: createPendingView($('view-pending'), ctx),
    pools: createPoolsView($('view-pools'), ctx),
    custom: createCustomView($('view-custom'), ctx),
    whatif: createWhatIfView($('view-whatif'), ctx),
  };
}

function route() {
  if (!app.views) return;
  const name = location.hash.replace(/^#\/?/, '');
  app.current = VIEW_NAMES.includes(name) ? name : 'namespaces';
  for (const v of VIEW_NAMES) $('view-' + v).hidden = v !== app.current;
  syncCollections();
  renderView();
}

// ---- login and logout

function showLogin(message = '') {
  stopCollections();
  clearInterval(app.ticker);
  app.views = null;
  $('app').hidden = true;
  $('login').hidden = false;
  const error = $('login-error');
  error.textContent = message;
  error.hidden = !message;
  $('login-token').value = '';
  $('login-namespaces').value = savedNamespaces();
  $('login-token').focus();
}

async function startDashboard(token, namedText) {
  setToken(token);
  const user = await whoAmI(); // throws ApiError 401 for a bad token
  app.user = user.username ?? '';
  const named = parseNamespaces(namedText);
  app.scope = await findScope(named);
  sessionStorage.setItem(TOKEN_KEY, token);
  $('whoami').textContent = app.user;
  $('login').hidden = true;
  $('app').hidden = false;
  renderScope();
  app.views = buildViews();
  // ages in the pending list tick once a second without re-rendering
  app.ticker = setInterval(() => app.views?.pending?.tick(), 1000);
  route();
}

function logout(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  setToken('');
  showLogin(message);
}

async function login(event) {
  event.preventDefault();
  const token = $('login-token').value.trim();
  const namedText = $('login-namespaces').value;
  const button = event.submitter ?? document.querySelector('#login-form button');
  button.disabled = true;
  try {
    saveNamespaces(parseNamespaces(namedText));
    await startDashboard(token, namedText);
  } catch (err) {
    // a 401 already returned to the login form through onUnauthorized
    if (!(err instanceof ApiError && err.code === 401)) {
      showLogin(`Cannot log in: ${err.message}`);
    }
  } finally {
    button.disabled = false;
  }
}

function init() {
  onUnauthorized((message) => {
    logout(`The server refused the token: 401 ${message}.`);
  });
  $('login-form').addEventListener('submit', login);
  $('logout').addEventListener('click', () => logout('Logged out.'));
  window.addEventListener('hashchange', route);
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (!saved) return showLogin();
  startDashboard(saved, savedNamespaces()).catch((err) => {
    if (!(err instanceof ApiError && err.code === 401)) showLogin(`Cannot reach the server: ${err.message}`);
  });
}

init();
