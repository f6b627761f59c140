// Write reactor-host controllers in JavaScript (componentize-js, world `controller`).
//
//   import { defineReactor, spec, status, setStatus, publish, log } from '../../sdk/js/reactor-sdk.js';
//   export const reactor = defineReactor({
//     describe: () => ({ name: 'my-reactor', kinds: ['Thing'], resyncPeriodMs: 60000, handlesDelete: true }),
//     // Other kinds watched (optional): owned children, referenced and selecting objects:
//     //   owns: ['Child'], references: [{ kind: 'Plan', path: 'spec.plan' }],
//     //   selects: [{ kind: 'Quota', path: 'spec.selector' }]
//     // An object's owner, if a reactor applied it: obj.meta?.owner ({kind, name, uid, component}).
//     onCreate(obj) { setStatus({ ...status(obj), seen: true }); },
//   });
//
// What it takes off your hands:
// - every callback has a default (`validate` accepts, `onUpdate(old, new)` calls
//   `onCreate(new)`, the others do nothing), as in the Rust SDK;
// - a callback returns nothing (done) or `requeueAfter(ms)`; it fails by throwing
//   `retry(msg)` or `permanent(msg)`. A failed store or Nimbus call becomes the right error
//   (unavailable and conflict retry, the rest are permanent), bad JSON is permanent, and any
//   other exception retries with its message, so it shows in `status.reconcile`; its stack
//   (at most 40 lines, 4 KiB) follows the message after a newline, for the host's event and
//   the component's log;
// - `validate` refuses by throwing anything; its message is what the user sees;
// - JSON: `spec(obj)`, `status(obj)`, `labels(obj)` give plain objects; `setStatus`,
//   `publish` and `apply` take any JSON-serialisable value; `u64` numbers (resync period,
//   requeue delay) may be given as plain numbers.
//
// componentize-js resolves relative imports from the folder it runs in: build from the
// repository root (scripts/build-components.sh does).

import * as store from 'reactor:host/store@0.2.1';
import * as nimbus from 'reactor:host/nimbus@0.2.1';
import { log as writeLog } from 'reactor:host/log@0.2.1';
import { get as configGet } from 'reactor:host/config@0.2.1';

/** A failure the host retries with backoff. */
export function retry(message) {
  return { tag: 'retry', val: String(message) };
}

/** A failure retrying cannot fix: shown in status, not retried until the object changes. */
export function permanent(message) {
  return { tag: 'permanent', val: String(message) };
}

/** Returned by a callback: run the object again after `ms` milliseconds. */
export function requeueAfter(ms) {
  return { tag: 'requeue-after', val: BigInt(ms) };
}

const DONE = { tag: 'done' };

function variantMessage(value) {
  return value.val === undefined ? value.tag : `${value.tag}: ${value.val}`;
}

/** Maps anything a callback threw to the WIT `error` variant. */
function toError(thrown, where) {
  const payload = thrown && Object.prototype.hasOwnProperty.call(thrown, 'payload') ? thrown.payload : thrown;
  if (payload && typeof payload === 'object' && typeof payload.tag === 'string') {
    if (payload.tag === 'retry' || payload.tag === 'permanent') return payload;
    const message = `${where.get(thrown) ?? 'host call'} ${variantMessage(payload)}`;
    const transient = payload.tag === 'unavailable' || payload.tag === 'conflict';
    return transient ? retry(message) : permanent(message);
  }
  if (thrown instanceof SyntaxError) return permanent(`invalid JSON: ${thrown.message}`);
  if (thrown instanceof Error) {
    const line = `${thrown.name}: ${thrown.message}`.replace(/\r?\n/g, ' ');
    const stack = traceback(thrown);
    return retry(stack === undefined ? line : `${line}\n${stack}`);
  }
  return retry(String(thrown));
}

/** Lines of an unexpected exception's stack sent at most (the host keeps 8 KiB). */
export const TRACEBACK_LINES = 40;
/** Bytes of an unexpected exception's stack sent at most. */
export const TRACEBACK_BYTES = 4096;

/**
 * The stack of `error` headed by its name and message (as V8 prints it; SpiderMonkey's has
 * frames alone), at most `TRACEBACK_LINES` lines and `TRACEBACK_BYTES` bytes: its first
 * lines (where it was thrown), then a line saying how many were cut.
 */
function traceback(error) {
  if (typeof error.stack !== 'string' || error.stack.trim() === '') return undefined;
  const lines = error.stack.replace(/\s+$/, '').split('\n');
  if (!lines[0].startsWith(`${error.name}:`) && lines[0] !== error.name) {
    lines.unshift(`${error.name}: ${error.message}`.replace(/\r?\n/g, ' ').slice(0, 200));
  }
  return bounded(lines);
}

function utf8Length(text) {
  let n = 0;
  for (const c of text) {
    const p = c.codePointAt(0);
    n += p < 0x80 ? 1 : p < 0x800 ? 2 : p < 0x10000 ? 3 : 4;
  }
  return n;
}

function bounded(lines) {
  const size = lines.reduce((n, line) => n + utf8Length(line) + 1, 0);
  if (lines.length <= TRACEBACK_LINES && size <= TRACEBACK_BYTES) return lines.join('\n');
  const kept = [];
  let room = TRACEBACK_BYTES - 64; // the marker
  for (const line of lines) {
    if (kept.length + 1 >= TRACEBACK_LINES || utf8Length(line) + 1 > room) break;
    kept.push(line);
    room -= utf8Length(line) + 1;
  }
  if (kept.length === 0) {
    // One huge first line: its start.
    let start = '';
    let length = 0;
    for (const c of lines[0]) {
      length += utf8Length(c);
      if (length > room - 8) break;
      start += c;
    }
    kept.push(`${start} [cut]`);
  }
  return [...kept, `    ... ${lines.length - kept.length} more lines cut by the SDK`].join('\n');
}

// Which interface a thrown host error came from, to name it in messages.
const origin = new WeakMap();

function host(name, call) {
  return (...args) => {
    try {
      return call(...args);
    } catch (e) {
      if (e && typeof e === 'object') origin.set(e, name);
      throw e;
    }
  };
}

function action(value) {
  if (value === undefined || value === null) return DONE;
  return value;
}

/**
 * The export object of a reactor: pass `describe` and the callbacks you need.
 * `export const reactor = defineReactor({...})`.
 */
export function defineReactor(impl) {
  if (typeof impl.describe !== 'function') throw new Error('a reactor needs describe()');
  const wrap = (fn) => (...args) => {
    try {
      return action(fn(...args));
    } catch (e) {
      throw { payload: toError(e, origin) };
    }
  };
  const onCreate = wrap(impl.onCreate ?? (() => undefined));
  return {
    describe() {
      const info = impl.describe();
      return {
        name: info.name,
        kinds: [...info.kinds],
        resyncPeriodMs: BigInt(info.resyncPeriodMs ?? 0),
        handlesDelete: Boolean(info.handlesDelete),
        watches: [
          ...(info.owns ?? []).map((kind) => ({ tag: 'owns', val: String(kind) })),
          ...(info.references ?? []).map(({ kind, path }) => ({ tag: 'references', val: { kind, path } })),
          ...(info.selects ?? []).map(({ kind, path }) => ({ tag: 'selects', val: { kind, path } })),
        ],
      };
    },
    validate(obj) {
      if (!impl.validate) return;
      try {
        impl.validate(obj);
      } catch (e) {
        const payload = e && Object.prototype.hasOwnProperty.call(e, 'payload') ? e.payload : e;
        let message;
        if (payload instanceof Error) message = payload.message;
        else if (payload && typeof payload === 'object' && 'val' in payload) message = String(payload.val);
        else message = String(payload);
        throw { payload: message };
      }
    },
    onCreate,
    onUpdate: impl.onUpdate ? wrap(impl.onUpdate) : (_old, obj) => onCreate(obj),
    onDelete: wrap(impl.onDelete ?? (() => undefined)),
    onAgentStatus: wrap(impl.onAgentStatus ?? (() => undefined)),
  };
}

// ------------------------------------------------------------------------------ JSON

/** The object's spec as a plain object (`{}` when empty). */
export function spec(obj) {
  const value = obj.spec ? JSON.parse(obj.spec) : {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw permanent('spec is not a JSON object');
  }
  return value;
}

/** The object's status as a plain object (`{}` when there is none or it is not an object). */
export function status(obj) {
  if (!obj.status) return {};
  try {
    const value = JSON.parse(obj.status);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** The object's labels as a plain object. */
export function labels(obj) {
  return Object.fromEntries(obj.labels);
}

/** This component's config from the host's config file, parsed; `undefined` without one. */
export function config() {
  const text = configGet();
  return text === undefined || text === null ? undefined : JSON.parse(text);
}

// ------------------------------------------------------------------------------ store, nimbus

const setStatusRaw = host('store', store.setStatus);
const getRaw = host('store', store.get);
const listRaw = host('store', store.list);
const applyRaw = host('store', store.apply);
const publishRaw = host('nimbus', nimbus.publish);
const unpublishRaw = host('nimbus', nimbus.unpublish);
const publishedRaw = host('nimbus', nimbus.published);
const statusesRaw = host('nimbus', nimbus.statuses);
const agentStatusesRaw = host('nimbus', nimbus.agentStatuses);

/** Replaces the status of the callback's primary object. */
export function setStatus(value) {
  setStatusRaw(JSON.stringify(value));
}

/** One object of the store, or `undefined`. */
export function get(kind, name) {
  return getRaw(kind, name) ?? undefined;
}

/** The objects of `kind` whose labels include `selector`. */
export function list(kind, selector = {}) {
  return listRaw(kind, Object.entries(selector));
}

/** Creates or updates a child object owned by the primary object. */
export function apply(kind, name, specValue, labelsValue = {}) {
  return applyRaw({
    kind,
    name,
    labels: Object.entries(labelsValue),
    spec: JSON.stringify(specValue),
    status: undefined,
    meta: undefined,
  });
}

/**
 * Publishes `value` (any JSON) as Nimbus item `key`: to `{agents: [...]}` by id, or to the
 * agents whose labels include `{selector: {...}}` (every agent when empty or left out).
 */
export function publish(key, value, { selector = {}, agents } = {}) {
  const to = agents ? { tag: 'agents', val: [...agents] } : { tag: 'labels', val: Object.entries(selector) };
  publishRaw(key, JSON.stringify(value), to);
}

/** Withdraws a Nimbus item (a missing one is fine). */
export function unpublish(key) {
  unpublishRaw(key);
}

/** Keys this object has published under `prefix`. */
export function published(prefix) {
  return publishedRaw(prefix);
}

/** Agents' latest reports on this object's items under `prefix`. */
export function statuses(prefix) {
  return statusesRaw(prefix);
}

/**
 * `agent`'s latest reports on this object's items under `prefix`: `statuses` of one agent, at
 * the cost of that agent's reports alone (reactor:host@0.2.1).
 */
export function agentStatuses(prefix, agent) {
  return agentStatusesRaw(prefix, agent);
}

// ----------------------------------------------------------------------- conditions

/** The wall clock now (the host's, or the one `reactor-host test` fixes), RFC 3339 to the second. */
export function now() {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Sets the condition `type` (status 'True', 'False' or 'Unknown') in `statusValue` (the status
 * about to be written), among the conditions of `previous` (the object's status as read:
 * `status(obj)`), as Kubernetes keeps `status.conditions`: its `lastTransitionTime` moves (to
 * `at`, else now) only when its status changes. Returns `statusValue`.
 */
export function setCondition(statusValue, previous, { type, status: conditionStatus, reason = '', message = '', observedGeneration, at } = {}) {
  const source = statusValue.conditions ?? previous?.conditions ?? [];
  const conditions = source.filter((c) => c && typeof c === 'object').map((c) => ({ ...c }));
  const index = conditions.findIndex((c) => c.type === type);
  const old = index >= 0 ? conditions[index] : undefined;
  const since = old?.status === conditionStatus ? old.lastTransitionTime : undefined;
  const entry = { type, status: conditionStatus, reason, message, lastTransitionTime: since ?? at ?? now() };
  if (observedGeneration !== undefined) entry.observedGeneration = Number(observedGeneration);
  if (index >= 0) conditions[index] = entry;
  else conditions.push(entry);
  statusValue.conditions = conditions;
  return statusValue;
}

/** The condition `type` of `statusValue`, or undefined. */
export function findCondition(statusValue, type) {
  return (statusValue.conditions ?? []).find((c) => c.type === type);
}

/** Whether `statusValue` has the condition `type` with status 'True'. */
export function isConditionTrue(statusValue, type) {
  return findCondition(statusValue, type)?.status === 'True';
}

// ------------------------------------------------------------------------------ log

/** Logging to the host's log, under the component's name. */
export const log = {
  trace: (message) => writeLog('trace', String(message)),
  debug: (message) => writeLog('debug', String(message)),
  info: (message) => writeLog('info', String(message)),
  warn: (message) => writeLog('warn', String(message)),
  error: (message) => writeLog('error', String(message)),
};
