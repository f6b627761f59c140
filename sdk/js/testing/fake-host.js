// The FakeHost: a store, Nimbus, a log and a config in the test's own process, applying the
// host's rules to what a callback does (children owned by its primary object, objects it did
// not create refused, item keys owned by one object, set-status on the primary object) and
// dropping a failed callback's writes.

import { install } from './current.js';

const FAKE_TIME = '2025-01-01T00:00:00Z';
const RESERVED_KINDS = ['NimbusItem', 'NimbusReport', 'Agent', 'ComponentRollback', 'Credential'];
const KIND = /^[A-Za-z][A-Za-z0-9-]{0,62}$/;
const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const KEY = /^[A-Za-z0-9_./:-]{1,512}$/;

/** A failed host call, as the component's bindings throw it: the WIT error in `payload`. */
class ComponentError extends Error {
  constructor(payload) {
    super(`${payload.tag}${payload.val === undefined ? '' : `: ${payload.val}`}`);
    this.payload = payload;
  }
}

/** The states of an item status, as componentize-js hands them to a reactor (WIT enum names). */
const STATES = ['pending', 'applied', 'failed', 'removed'];

/**
 * Refuses a report state that a component never gets ('Applied', 'ok', a number): a reactor
 * compares states with these strings, so another value would silently match none of them.
 */
function checkState(call, state) {
  if (!STATES.includes(state)) {
    const shown = typeof state === 'string' ? `'${state}'` : String(state);
    throw new TypeError(`${call}: the state must be one of ${STATES.map((s) => `'${s}'`).join(', ')}, not ${shown}`);
  }
}

const fail = (tag, val) => {
  throw new ComponentError(val === undefined ? { tag } : { tag, val });
};
const id = (kind, name) => `${kind}/${name}`;
const clone = (value) => structuredClone(value);

/** A new object: `spec` and `status` are any JSON, `labels` a plain object. */
export function object(kind, name, spec = {}, { labels = {}, status } = {}) {
  return {
    kind,
    name,
    labels: Object.entries(labels),
    spec: JSON.stringify(spec),
    status: status === undefined ? undefined : JSON.stringify(status),
    meta: undefined,
  };
}

function checkKind(kind) {
  if (RESERVED_KINDS.includes(kind)) fail('denied', `kind ${kind} is reserved to the host: use the nimbus import`);
  if (!KIND.test(kind)) fail('invalid', `kind ${JSON.stringify(kind)} is invalid: it must match [A-Za-z][A-Za-z0-9-]*`);
}

function parse(what, text, tag) {
  try {
    return JSON.parse(text);
  } catch (e) {
    return fail(tag, `${what} is not JSON: ${e.message}`);
  }
}

function checkObject(obj) {
  checkKind(obj.kind);
  if (!NAME.test(obj.name)) {
    fail('invalid', `name ${JSON.stringify(obj.name)} is invalid: it must be lowercase letters, digits and '-', start and end with a letter or digit`);
  }
  parse(`spec of ${id(obj.kind, obj.name)}`, obj.spec, 'invalid');
}

export class FakeHost {
  /** An empty host running component `component` (the name owners carry). */
  constructor(component = 'test') {
    this.component = component;
    /** Every line logged: `{level, message}`, e.g. `{level: 'info', message: '...'}`. */
    this.logs = [];
    this.configText = undefined;
    this.configRevision = 0n;
    this.world = { objects: new Map(), items: new Map(), reports: new Map(), revision: 0n, uids: 0 };
    this.primary = undefined;
    this.storeFailures = [];
    this.nimbusFailures = [];
  }

  // ---------------------------------------------------------------- set up, inspect

  /** Sets the component's config (any JSON), as the host's config file would. */
  setConfig(value) {
    this.configText = JSON.stringify(value);
    this.configRevision += 1n;
  }

  /** Stores `obj` as a user's apply would (its status too, when it has one). */
  put(obj) {
    try {
      checkObject(obj);
    } catch (e) {
      throw new Error(`FakeHost.put: the host would refuse ${id(obj.kind, obj.name)}: ${e.message}`);
    }
    return this.upsert(obj, undefined);
  }

  get(kind, name) {
    return clone(this.world.objects.get(id(kind, name)));
  }

  /** The stored objects of `kind`, by name. */
  list(kind) {
    return [...this.world.objects.values()]
      .filter((o) => o.kind === kind)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map(clone);
  }

  /** The status of `kind/name`, parsed; `undefined` when it has none. */
  status(kind, name) {
    const text = this.world.objects.get(id(kind, name))?.status;
    return text === undefined ? undefined : JSON.parse(text);
  }

  /** Published items, by key: `{key, value (parsed), to, owner, revision}`. */
  items() {
    return [...this.world.items.values()].sort((a, b) => (a.key < b.key ? -1 : 1)).map(clone);
  }

  item(key) {
    return clone(this.world.items.get(key));
  }

  /** Records an agent's report on an item, as `statuses()` returns it to its owner. */
  report(key, agent, state = 'applied', { message, revision = 1n } = {}) {
    checkState('report', state);
    const status = { key, agent, state, message, revision: BigInt(revision) };
    this.world.reports.set(`${key}\n${agent}`, status);
    return status;
  }

  /** The next store call fails with this WIT error, e.g. `{tag: 'unavailable', val: 'down'}`. */
  failNextStore(error) {
    this.storeFailures.push(error);
  }

  /** The next Nimbus call fails with this WIT error. */
  failNextNimbus(error) {
    this.nimbusFailures.push(error);
  }

  // ---------------------------------------------------------------- callbacks

  /** Runs `fn` with this host installed, outside any callback. */
  run(fn) {
    const previous = install(this);
    try {
      return fn();
    } finally {
      install(previous);
    }
  }

  describe(reactor) {
    return this.run(() => reactor.describe());
  }

  /** `undefined` when `reactor` admits `obj`, else its refusal message. */
  validate(reactor, obj) {
    try {
      this.run(() => reactor.validate(obj));
      return undefined;
    } catch (e) {
      return e.payload;
    }
  }

  /** Stores `obj` and runs `onCreate`; returns the action or the error the host would get. */
  onCreate(reactor, obj) {
    const stored = this.put(obj);
    return this.callback(stored, () => reactor.onCreate(clone(stored)));
  }

  onUpdate(reactor, old, obj) {
    const stored = this.put(obj);
    return this.callback(stored, () => reactor.onUpdate(old, clone(stored)));
  }

  /** Marks `obj` deleting and runs `onDelete`; on `done` it goes, with its children. */
  onDelete(reactor, obj) {
    const stored = this.world.objects.get(id(obj.kind, obj.name)) ?? this.put(obj);
    stored.meta.deleting = true;
    this.world.objects.set(id(stored.kind, stored.name), stored);
    const result = this.callback(stored, () => reactor.onDelete(clone(stored)));
    if (result.tag === 'done') this.removeWithChildren(stored.kind, stored.name);
    return result;
  }

  onAgentStatus(reactor, owner, status) {
    checkState('onAgentStatus', status?.state);
    const stored = this.put(owner);
    this.world.reports.set(`${status.key}\n${status.agent}`, status);
    return this.callback(stored, () => reactor.onAgentStatus(clone(stored), status));
  }

  callback(primary, fn) {
    const before = clone(this.world);
    this.primary = id(primary.kind, primary.name);
    try {
      return this.run(fn);
    } catch (e) {
      this.world = before;
      if (e && typeof e === 'object' && 'payload' in e) return this.shown(primary, e.payload);
      throw e;
    } finally {
      this.primary = undefined;
    }
  }

  /** `error` as the host shows it: the first line returned, the rest logged. */
  shown(primary, error) {
    if (error?.tag !== 'retry' && error?.tag !== 'permanent') return error;
    const text = String(error.val).replace(/^\s+/, '');
    const at = text.indexOf('\n');
    if (at < 0) return error;
    const line = text.slice(0, at).trimEnd();
    const detail = text.slice(at + 1).trimEnd();
    if (detail.trim() !== '') {
      this.logs.push({ level: 'error', message: `[host] ${id(primary.kind, primary.name)} failed: ${line}\n${detail}` });
    }
    return { tag: error.tag, val: line };
  }

  // ---------------------------------------------------------------- the world

  upsert(obj, owner) {
    const world = this.world;
    world.revision += 1n;
    const current = world.objects.get(id(obj.kind, obj.name));
    let stored;
    if (current === undefined) {
      world.uids += 1;
      stored = {
        kind: obj.kind,
        name: obj.name,
        labels: clone(obj.labels),
        spec: obj.spec,
        status: obj.status,
        meta: {
          uid: `fake-uid-${world.uids}`,
          revision: world.revision,
          generation: 1n,
          created: FAKE_TIME,
          updated: FAKE_TIME,
          finalizers: [],
          deleting: false,
          owner,
        },
      };
    } else {
      stored = clone(current);
      if (current.spec !== obj.spec) stored.meta.generation += 1n;
      stored.meta.revision = world.revision;
      stored.labels = clone(obj.labels);
      stored.spec = obj.spec;
      if (obj.status !== undefined) stored.status = obj.status;
      if (owner !== undefined) stored.meta.owner = owner;
    }
    world.objects.set(id(obj.kind, obj.name), stored);
    return clone(stored);
  }

  removeWithChildren(kind, name) {
    const gone = this.world.objects.get(id(kind, name));
    if (!gone) return;
    this.world.objects.delete(id(kind, name));
    for (const child of [...this.world.objects.values()]) {
      if (child.meta.owner?.uid === gone.meta.uid) this.removeWithChildren(child.kind, child.name);
    }
  }

  owner(call) {
    if (!this.primary) fail('denied', `${call} needs a callback's primary object: call it from a callback`);
    const stored = this.world.objects.get(this.primary);
    if (!stored) fail('unavailable', `${this.primary} is not in the store`);
    return { kind: stored.kind, name: stored.name, uid: stored.meta.uid, component: this.component };
  }

  static checkMine(obj, mine) {
    const held = obj.meta.owner;
    if (!held) {
      fail('denied', `${id(obj.kind, obj.name)} is not this reactor's to write: it was not created by a reactor, so no reactor may take it over`);
    }
    if (held.kind !== mine.kind || held.name !== mine.name || held.component !== mine.component) {
      fail('denied', `${id(obj.kind, obj.name)} is not this reactor's to write: it is owned by ${id(held.kind, held.name)} (component ${held.component})`);
    }
  }

  storeFailure() {
    const next = this.storeFailures.shift();
    if (next) throw new ComponentError(next);
  }

  nimbusFailure() {
    const next = this.nimbusFailures.shift();
    if (next) throw new ComponentError(next);
  }

  // ---------------------------------------------------------------- the imports

  storeGet(kind, name) {
    this.storeFailure();
    checkKind(kind);
    return this.get(kind, name);
  }

  storeList(kind, selector) {
    this.storeFailure();
    checkKind(kind);
    return this.list(kind)
      .filter((o) => selector.every(([k, v]) => o.labels.some(([lk, lv]) => lk === k && lv === v)));
  }

  storeApply(obj) {
    this.storeFailure();
    checkObject(obj);
    if (this.primary === id(obj.kind, obj.name)) {
      fail('denied', `${id(obj.kind, obj.name)} is the callback's own object: change its status with set-status`);
    }
    const mine = this.owner('store.apply');
    const current = this.world.objects.get(id(obj.kind, obj.name));
    if (current) FakeHost.checkMine(current, mine);
    const expected = obj.meta?.revision ?? 0n;
    if (expected && current?.meta.revision !== BigInt(expected)) {
      fail('conflict', `conflict on ${id(obj.kind, obj.name)}: expected revision ${expected}`);
    }
    return this.upsert({ ...obj, status: undefined }, mine);
  }

  storeDelete(kind, name) {
    this.storeFailure();
    checkKind(kind);
    const mine = this.owner('store.delete');
    const current = this.world.objects.get(id(kind, name));
    if (!current) return false;
    FakeHost.checkMine(current, mine);
    this.removeWithChildren(kind, name);
    return true;
  }

  setStatus(text) {
    this.storeFailure();
    parse('status', text, 'invalid');
    if (!this.primary) fail('denied', "store.setStatus needs a callback's primary object");
    const stored = this.world.objects.get(this.primary);
    if (!stored) fail('not-found');
    this.world.revision += 1n;
    stored.status = text;
    stored.meta.revision = this.world.revision;
  }

  publisher(call) {
    if (!this.primary) fail('denied', `${call} needs a callback's primary object`);
    return this.primary;
  }

  checkItemOwner(key, publisher) {
    const item = this.world.items.get(key);
    if (item && id(item.owner.kind, item.owner.name) !== publisher) {
      fail('denied', `item ${key} belongs to ${id(item.owner.kind, item.owner.name)}`);
    }
  }

  static checkKey(key) {
    if (!KEY.test(key) || key.startsWith('/')) {
      fail('invalid', `item key ${JSON.stringify(key)} is invalid: use letters, digits and -_./: (at most 512, not starting with /)`);
    }
  }

  publish(key, text, to) {
    this.nimbusFailure();
    const publisher = this.publisher('nimbus.publish');
    FakeHost.checkKey(key);
    const value = parse(`value of item ${key}`, text, 'invalid');
    this.checkItemOwner(key, publisher);
    const old = this.world.items.get(key);
    const same = old && JSON.stringify(old.value) === JSON.stringify(value);
    const revision = old ? old.revision + (same ? 0n : 1n) : 1n;
    const stored = this.world.objects.get(publisher);
    const owner = { kind: stored.kind, name: stored.name, uid: stored.meta.uid, component: this.component };
    this.world.items.set(key, { key, value, to: clone(to), owner, revision });
  }

  unpublish(key) {
    this.nimbusFailure();
    const publisher = this.publisher('nimbus.unpublish');
    FakeHost.checkKey(key);
    this.checkItemOwner(key, publisher);
    this.world.items.delete(key);
    for (const [k, report] of [...this.world.reports]) {
      if (report.key === key) this.world.reports.delete(k);
    }
  }

  keysOf(call, prefix) {
    const publisher = this.publisher(call);
    return this.items()
      .filter((i) => i.key.startsWith(prefix) && id(i.owner.kind, i.owner.name) === publisher)
      .map((i) => i.key);
  }

  published(prefix) {
    this.nimbusFailure();
    return this.keysOf('nimbus.published', prefix);
  }

  statuses(prefix, agent = undefined, call = 'nimbus.statuses') {
    this.nimbusFailure();
    const mine = new Set(this.keysOf(call, prefix));
    return [...this.world.reports.values()]
      .filter((r) => mine.has(r.key) && (agent === undefined || r.agent === agent))
      .map(clone);
  }

  agentStatuses(prefix, agent) {
    return this.statuses(prefix, agent, 'nimbus.agentStatuses');
  }
}
