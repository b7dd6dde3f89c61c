// app.js - the dashboard's shell: token login, the views (hash routes), the
// collections each view watches, and rendering batched per animation frame.
//
// Why not watch everything all the time: allotd speaks HTTP/1.1, where a
// browser opens at most 6 connections to one origin, and every open watch
// holds one. The quotas and the pending pods (which every view uses) are
// always watched; each view adds its own (at most two more), so a request
// such as the What-if review always finds a free connection.

import { setToken, onUnauthorized, whoAmI, ApiError } from './api.js';
import { Collection } from './watch.js';
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
  quotas: { path: '/api/v1/resourcequotas' },
  pending: {
    path: '/api/v1/pods?fieldSelector=' + encodeURIComponent('status.pendingOnQuota!='),
    fallbackPaths: ['/api/v1/pods?fieldSelector=' + encodeURIComponent('status.phase=Pending')],
    keep: (pod, degraded) => !degraded || pendingQuotaName(pod) !== '',
  },
  namespaces: { path: '/api/v1/namespaces' },
  pools: { path: `${CAPSULE}/resourcepools` },
  claims: { path: `${CAPSULE}/resourcepoolclaims` },
  customquotas: { path: `${CAPSULE}/customquotas` },
  globalcustomquotas: { path: `${CAPSULE}/globalcustomquotas` },
};
const ALWAYS = ['quotas', 'pending'];

const $ = (id) => document.getElementById(id);

const app = {
  collections: new Map(), // id -> running Collection
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
  $('conn-text').textContent = state;
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

function syncCollections() {
  const wanted = new Set([...ALWAYS, ...(app.views?.[app.current]?.needs ?? [])]);
  for (const [id, c] of app.collections) {
    if (!wanted.has(id)) {
      c.stop(); // frees its connection; the data would go stale, so it is dropped
      app.collections.delete(id);
    }
  }
  for (const id of wanted) {
    if (app.collections.has(id)) continue;
    const c = new Collection({ ...SOURCES[id], onChange: scheduleRender });
    app.collections.set(id, c);
    c.start();
  }
}

function stopCollections() {
  for (const c of app.collections.values()) c.stop();
  app.collections.clear();
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
  $('login-token').focus();
}

async function startDashboard(token) {
  setToken(token);
  const user = await whoAmI(); // throws ApiError 401 for a bad token
  sessionStorage.setItem(TOKEN_KEY, token);
  $('whoami').textContent = user.username ?? '';
  $('login').hidden = true;
  $('app').hidden = false;
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
  const button = event.submitter ?? document.querySelector('#login-form button');
  button.disabled = true;
  try {
    await startDashboard(token);
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
  startDashboard(saved).catch((err) => {
    if (!(err instanceof ApiError && err.code === 401)) showLogin(`Cannot reach the server: ${err.message}`);
  });
}

init();
