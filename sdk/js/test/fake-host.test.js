// The fake host applies the host's rules to what a callback does: `node --test sdk/js/test/`.

import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FakeHost, object } from '../testing.js';

const sdk = await import('../reactor-sdk.js');

// Applies Child/<name>-child, publishes own/<name>, sets status from the config.
const parent = sdk.defineReactor({
  describe: () => ({ name: 'parent', kinds: ['Parent'], owns: ['Child'] }),
  onCreate(obj) {
    sdk.apply('Child', `${obj.name}-child`, { of: obj.name });
    sdk.publish(`own/${obj.name}`, 1, { agents: ['edge-1'] });
    sdk.setStatus({ greeting: sdk.config() });
    if (sdk.spec(obj).fail) throw sdk.retry('asked to fail');
    if (sdk.spec(obj).take) sdk.apply('Child', sdk.spec(obj).take, {});
    return sdk.requeueAfter(5000);
  },
});

// Records in status, per agent, the state of its latest report.
const counter = sdk.defineReactor({
  describe: () => ({ name: 'counter', kinds: ['Parent'] }),
  onAgentStatus(owner, report) {
    sdk.setStatus({ ...sdk.status(owner), [report.agent]: report.state });
  },
});

// Reads a spec field that may be missing (a TypeError), or recurses until told to fail.
const careless = sdk.defineReactor({
  describe: () => ({ name: 'careless', kinds: ['Parent'] }),
  onCreate(obj) {
    const spec = sdk.spec(obj);
    if ('depth' in spec) return deeper(spec.depth);
    return spec.plan.name; // the line the stack names
  },
});

function deeper(depth) {
  if (depth === 0) throw new RangeError('too deep\nsecond line');
  return deeper(depth - 1);
}

test('an unexpected exception keeps its stack in the log', () => {
  const host = new FakeHost('careless');
  const result = host.onCreate(careless, object('Parent', 'p'));
  assert.equal(result.tag, 'retry');
  assert.match(result.val, /^TypeError: Cannot read properties of undefined \(reading 'name'\)$/);
  assert.equal(host.logs.length, 1, JSON.stringify(host.logs));
  const { level, message } = host.logs[0];
  assert.equal(level, 'error');
  const lines = message.split('\n');
  assert.equal(lines[0], `[host] Parent/p failed: ${result.val}`);
  assert.equal(lines[1], result.val);
  const source = readFileSync(new URL(import.meta.url), 'utf8').split('\n');
  const line = source.findIndex((text) => text.includes('the line the stack names')) + 1;
  assert.match(lines[2], new RegExp(`at (Object\\.)?onCreate \\(${import.meta.url}:${line}:\\d+\\)$`));
});

test('a long stack is cut at its end and says so', () => {
  const host = new FakeHost('careless');
  const limit = Error.stackTraceLimit; // V8 keeps 10 frames unless told otherwise
  Error.stackTraceLimit = Infinity;
  const result = host.onCreate(careless, object('Parent', 'p', { depth: 100 }));
  Error.stackTraceLimit = limit;
  assert.deepEqual(result, { tag: 'retry', val: 'RangeError: too deep second line' });
  const stack = host.logs[0].message.split('\n').slice(1);
  assert.ok(stack.length <= sdk.TRACEBACK_LINES, stack.length);
  assert.ok(Buffer.byteLength(stack.join('\n')) <= sdk.TRACEBACK_BYTES);
  assert.deepEqual(stack.slice(0, 2), ['RangeError: too deep', 'second line']);
  assert.match(stack[2], /at deeper /);
  assert.match(stack.at(-1), /^ {4}\.\.\. \d+ more lines cut by the SDK$/);
});

test('retry and permanent carry their message alone', () => {
  const host = new FakeHost('parent');
  assert.deepEqual(host.onCreate(parent, object('Parent', 'p', { fail: true })), { tag: 'retry', val: 'asked to fail' });
  assert.deepEqual(host.logs, []);
});

test('reports take one of the four states and refuse anything else', () => {
  const host = new FakeHost('counter');
  const owner = object('Parent', 'p');
  const failed = host.report('own/p', 'edge-1', 'failed', { message: 'no such interface' });
  assert.deepEqual(host.onAgentStatus(counter, owner, failed), { tag: 'done' });
  const pending = host.report('own/p', 'edge-2', 'pending', { message: 'waiting for eth0' });
  assert.deepEqual(host.onAgentStatus(counter, owner, pending), { tag: 'done' });
  assert.deepEqual(host.status('Parent', 'p'), { 'edge-1': 'failed', 'edge-2': 'pending' });
  assert.throws(() => host.report('own/p', 'edge-1', 'Applied'), {
    name: 'TypeError',
    message: "report: the state must be one of 'pending', 'applied', 'failed', 'removed', not 'Applied'",
  });
  const wrong = { key: 'own/p', agent: 'edge-1', state: 1, message: undefined, revision: 1n };
  assert.throws(() => host.onAgentStatus(counter, owner, wrong), {
    name: 'TypeError',
    message: /^onAgentStatus: the state must be one of .*, not 1$/,
  });
  assert.deepEqual(host.status('Parent', 'p'), { 'edge-1': 'failed', 'edge-2': 'pending' });
});

test('a callback owns what it applies and publishes', () => {
  const host = new FakeHost('parent');
  host.setConfig('hello');
  assert.deepEqual(host.onCreate(parent, object('Parent', 'p')), { tag: 'requeue-after', val: 5000n });
  const { owner } = host.get('Child', 'p-child').meta;
  assert.deepEqual(owner, { kind: 'Parent', name: 'p', uid: host.get('Parent', 'p').meta.uid, component: 'parent' });
  assert.deepEqual(host.item('own/p').to, { tag: 'agents', val: ['edge-1'] });
  assert.deepEqual(host.status('Parent', 'p'), { greeting: 'hello' });
});

test('a failed callback leaves none of its writes', () => {
  const host = new FakeHost('parent');
  assert.deepEqual(host.onCreate(parent, object('Parent', 'p', { fail: true })), { tag: 'retry', val: 'asked to fail' });
  assert.equal(host.get('Child', 'p-child'), undefined);
  assert.equal(host.item('own/p'), undefined);
  assert.equal(host.status('Parent', 'p'), undefined);
});

test('injected failures and refusals map like the host', () => {
  const host = new FakeHost('parent');
  host.failNextNimbus({ tag: 'unavailable', val: 'down' });
  assert.deepEqual(host.onCreate(parent, object('Parent', 'p')), { tag: 'retry', val: 'nimbus unavailable: down' });
  host.put(object('Child', 'users'));
  const refused = host.onCreate(parent, object('Parent', 'p', { take: 'users' }));
  assert.equal(refused.tag, 'permanent');
  assert.match(refused.val, /not created by a reactor/);
});

test('delete removes the object and its children', () => {
  const host = new FakeHost('parent');
  host.onCreate(parent, object('Parent', 'p'));
  assert.deepEqual(host.onDelete(parent, host.get('Parent', 'p')), { tag: 'done' });
  assert.deepEqual([host.get('Parent', 'p'), host.get('Child', 'p-child')], [undefined, undefined]);
});

test('a host call without a fake says how to install one', () => {
  assert.throws(() => sdk.get('Parent', 'p'), /run the callback through FakeHost/);
});

test("a condition's time moves only with its status", () => {
  const status = sdk.setCondition({ plan: 'gold' }, undefined, {
    type: 'Ready', status: 'False', reason: 'PlanNotFound', observedGeneration: 1n, at: '2026-01-01T00:00:00Z',
  });
  assert.deepEqual(status.conditions, [{
    type: 'Ready', status: 'False', reason: 'PlanNotFound', message: '',
    lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1,
  }]);
  const still = sdk.setCondition({}, status, { type: 'Ready', status: 'False', reason: 'PlanMissing', at: '2026-01-05T00:00:00Z' });
  assert.equal(sdk.findCondition(still, 'Ready').lastTransitionTime, '2026-01-01T00:00:00Z');
  assert.equal(sdk.findCondition(still, 'Ready').reason, 'PlanMissing');
  const ready = sdk.setCondition({}, still, { type: 'Ready', status: 'True', at: '2026-01-06T00:00:00Z' });
  assert.ok(sdk.isConditionTrue(ready, 'Ready'));
  assert.equal(sdk.findCondition(ready, 'Ready').lastTransitionTime, '2026-01-06T00:00:00Z');
  assert.equal(sdk.findCondition(ready, 'Synced'), undefined);
  assert.match(sdk.now(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});
