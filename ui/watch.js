// watch.js - one Kubernetes collection kept current: list it, then watch it
// from the list's resourceVersion, applying events as they come. A watch that
// ends or fails is resumed from the last resourceVersion seen (bookmarks move
// it on); only "410 Gone" (our version is too old) makes us list again.

import { request, requestJSON, ApiError } from './api.js';
import { objectKey } from './dom.js';
import { namespacedPath } from './scope.js';

// allotd sends a BOOKMARK every 5 s on a quiet watch: a stream silent for
// this long is dead (a lost connection that never closed) and is replaced.
const SILENCE_MS = 20000;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;

/**
 * A collection's state, for the views:
 *   loading     - first list in flight
 *   live        - listed, and the watch stream is open
 *   listed      - listed once and not watched (watch: false): a snapshot
 *   reconnecting- listed, watch being re-established (data shown may be stale)
 *   forbidden   - 403 on the list: the token may not see this (not retried)
 *   unavailable - 404: the server does not serve this resource (not retried)
 *   error       - any other failure of the list, retried with backoff
 */
export class Collection {
  /**
   * @param {object} o
   * @param {string} o.path      the list path, may carry a query (?fieldSelector=...)
   * @param {string[]} [o.fallbackPaths] paths to try in turn when the server
   *                   answers the list with 400 (a selector it does not know yet)
   * @param {(obj: object, degraded: boolean) => boolean} [o.keep] client-side
   *                   filter applied to listed and watched objects (those it
   *                   rejects are dropped); degraded: a fallback path is in use
   * @param {(urgent: boolean) => void} o.onChange called after items or state changed
   *                   (urgent: after a list or a state change, not an event)
   * @param {boolean} [o.watch] false: list once and do not watch (state
   *                   'listed'), for a collection there is no connection left
   *                   to watch (see NamespacedCollection)
   */
  constructor({ path, fallbackPaths = [], keep = () => true, onChange, watch = true }) {
    this.paths = [path, ...fallbackPaths];
    this.watch = watch;
    this.pathIndex = 0;
    this.keep = keep;
    this.onChange = onChange;
    this.items = new Map();
    this.state = 'loading';
    this.error = '';
    this.resourceVersion = '';
    this.version = 0; // bumped on every change, so views can skip unchanged data
    this.lists = 0; // lists done: 1 unless a watch was told its version is gone (410)
    this.lastData = 0; // Date.now() of the last list or data event
    this.controller = null;
    this.started = false;
    this.stopped = true;
  }

  get path() {
    return this.paths[this.pathIndex];
  }

  /** True while the primary path is refused and a fallback is used. */
  get degraded() {
    return this.pathIndex > 0;
  }

  /** Starts the list-and-watch loop. A Collection runs once: after stop(), make a new one. */
  start() {
    if (this.started) return;
    this.started = true;
    this.stopped = false;
    this.run().catch((err) => this.fail(err));
  }

  stop() {
    this.stopped = true;
    this.controller?.abort();
    this.controller = null;
  }

  setState(state, error = '') {
    if (this.state === state && this.error === error) return;
    this.state = state;
    this.error = error;
    this.changed(true);
  }

  /** `urgent`: a list or a state change, shown at once; events may wait a little. */
  changed(urgent = false) {
    this.version++;
    this.onChange(urgent);
  }

  fail(err) {
    if (this.stopped || err?.name === 'AbortError') return;
    this.setState('error', err?.message ?? String(err));
  }

  /** The loop: list, then watch until stopped; re-list only when told the version is gone. */
  async run() {
    let needList = true;
    let backoff = BACKOFF_MIN_MS;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.list();
          needList = false;
          if (!this.watch) return this.setState('listed');
        }
        const opened = await this.watchOnce();
        if (opened) backoff = BACKOFF_MIN_MS; // a stream that worked resets the backoff
        if (!this.stopped) this.setState('reconnecting');
      } catch (err) {
        if (this.stopped || err.name === 'AbortError') return;
        if (err instanceof ApiError) {
          if (err.code === 401) return; // the app returns to the login form
          if (err.code === 403) return this.setState('forbidden', err.message);
          if (err.code === 404 && needList) return this.setState('unavailable', err.message);
          if (err.code === 400 && needList && this.pathIndex + 1 < this.paths.length) {
            this.pathIndex++; // try the fallback at once
            continue;
          }
          if (err.code === 410) {
            needList = true;
            continue;
          }
        }
        this.setState(needList ? 'error' : 'reconnecting', err.message);
      }
      if (this.stopped) return;
      await delay(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  async list() {
    this.controller = new AbortController();
    const list = await requestJSON(this.path, { signal: this.controller.signal });
    if (this.stopped) return;
    this.items = new Map();
    for (const item of list.items ?? []) {
      if (this.keep(item, this.degraded)) this.items.set(objectKey(item), item);
    }
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.lists++;
    this.lastData = Date.now();
    this.state = 'live';
    this.error = '';
    this.changed(true);
  }

  watchPath() {
    const sep = this.path.includes('?') ? '&' : '?';
    const rv = encodeURIComponent(this.resourceVersion);
    return `${this.path}${sep}watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`;
  }

  /**
   * One watch stream, read to its end. Resolves true if the stream opened
   * (the caller then just re-watches), throws on errors (410 as ApiError 410).
   */
  async watchOnce() {
    const controller = new AbortController();
    this.controller = controller;
    let silence = setTimeout(() => controller.abort(), SILENCE_MS);
    try {
      const response = await request(this.watchPath(), { signal: controller.signal });
      this.setState('live');
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffered = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done || this.stopped) break;
        clearTimeout(silence);
        silence = setTimeout(() => controller.abort(), SILENCE_MS);
        // a chunk may hold many events (allotd sends a burst at once): split
        // it once, keeping the unfinished last line for the next chunk
        const lines = (buffered + decoder.decode(value, { stream: true })).split('\n');
        buffered = lines.pop();
        for (const line of lines) {
          if (line.trim()) this.apply(JSON.parse(line));
        }
      }
      return true;
    } catch (err) {
      // our own silence timer aborted it: treat as a stream end, re-watch
      if (err.name === 'AbortError' && !this.stopped && controller === this.controller) return false;
      throw err;
    } finally {
      clearTimeout(silence);
      controller.abort(); // a stream left by an exception must not hold its connection
    }
  }

  /** Applies one watch event; an ERROR event becomes an ApiError (410: list again). */
  apply(event) {
    const obj = event.object ?? {};
    if (event.type === 'ERROR') {
      throw new ApiError(obj.code ?? 500, obj.message ?? 'watch error', obj.reason ?? '');
    }
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (event.type === 'BOOKMARK') return;
    const key = objectKey(obj);
    if (event.type === 'DELETED' || !this.keep(obj, this.degraded)) {
      if (!this.items.delete(key)) return;
    } else {
      this.items.set(key, obj);
    }
    this.lastData = Date.now();
    this.changed();
  }
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One collection across several namespaces, for a token that may not list
 * it cluster-wide: a Collection per namespace (/api/v1/namespaces/NS/...),
 * seen by the views as one (items, state, version, ...). Each namespace's
 * watch holds a connection; those given `watch: false` are listed once.
 */
export class NamespacedCollection {
  /**
   * @param {object} o the Collection options (path and fallbackPaths are
   *                   cluster-wide paths), and:
   * @param {{name: string, watch: boolean}[]} o.namespaces where to list it
   * @param {string} o.noAccess the error when there is no namespace to list it in
   */
  constructor({ path, fallbackPaths = [], keep, onChange, namespaces, noAccess }) {
    this.subs = namespaces.map((ns) => new Collection({
      path: namespacedPath(path, ns.name),
      fallbackPaths: fallbackPaths.map((p) => namespacedPath(p, ns.name)),
      keep, onChange, watch: ns.watch,
    }));
    this.noAccess = noAccess;
    this.merged = new Map();
    this.mergedVersion = -1;
  }

  start() {
    for (const c of this.subs) c.start();
  }

  stop() {
    for (const c of this.subs) c.stop();
  }

  get version() {
    return this.subs.reduce((sum, c) => sum + c.version, 0);
  }

  /** Every namespace's objects, in one map (rebuilt only after a change). */
  get items() {
    const v = this.version;
    if (v !== this.mergedVersion) {
      this.merged = new Map(this.subs.flatMap((c) => [...c.items]));
      this.mergedVersion = v;
    }
    return this.merged;
  }

  /** The least settled of the namespaces' states; 'forbidden' only when all are. */
  get state() {
    const states = this.subs.map((c) => c.state);
    if (!states.length) return 'forbidden';
    for (const s of ['loading', 'error', 'reconnecting']) if (states.includes(s)) return s;
    if (states.every((s) => s === 'forbidden' || s === 'unavailable')) return states[0];
    return states.includes('listed') ? 'listed' : 'live';
  }

  get error() {
    if (!this.subs.length) return this.noAccess;
    return this.subs.find((c) => c.error)?.error ?? '';
  }

  get degraded() {
    return this.subs.some((c) => c.degraded);
  }

  get lastData() {
    return Math.max(0, ...this.subs.map((c) => c.lastData));
  }

  get lists() {
    return this.subs.reduce((sum, c) => sum + c.lists, 0);
  }
}

/** A fixed set of objects (the namespaces a scoped token names), as a collection. */
export class StaticCollection {
  constructor(objects) {
    this.items = new Map(objects.map((o) => [objectKey(o), o]));
    this.state = 'live';
    this.error = '';
    this.version = 1;
    this.lists = 0;
    this.lastData = 0;
    this.degraded = false;
  }

  start() {}

  stop() {}
}
