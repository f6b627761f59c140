// The Policy reactor against the SDK's fake host: `node --test examples/policy-js/`.

import test from 'node:test';
import assert from 'node:assert/strict';
import { FakeHost, object } from '../../sdk/js/testing.js';

const { reactor } = await import('./policy.js');

const TWO_RULES = [{ name: 'http', action: 'allow' }, { name: 'https', action: 'allow' }];
const policy = (rules) => object('Policy', 'web-allow', { selector: { role: 'edge' }, rules }, { labels: { app: 'web' } });
const keys = (host) => host.items().map((i) => i.key);

test('publishes one item per rule to its selector and counts them in status', () => {
  const host = new FakeHost('policy-js');
  assert.deepEqual(host.onCreate(reactor, policy(TWO_RULES)), { tag: 'done' });
  assert.deepEqual(keys(host), ['policy/web-allow/http', 'policy/web-allow/https']);
  const http = host.item('policy/web-allow/http');
  assert.deepEqual(http.value, { name: 'http', action: 'allow' });
  assert.deepEqual(http.to, { tag: 'labels', val: [['role', 'edge']] });
  assert.deepEqual(host.status('Policy', 'web-allow'), { ruleCount: 2, reactor: 'policy-js' });
  assert.deepEqual(host.logs, [{ level: 'info', message: 'policy web-allow publishes 2 rules' }]);
});

test('an update withdraws the rules that went away', () => {
  const host = new FakeHost('policy-js');
  const old = host.put(policy(TWO_RULES));
  host.onCreate(reactor, old);
  assert.deepEqual(host.onUpdate(reactor, old, policy([{ name: 'https', action: 'deny' }])), { tag: 'done' });
  assert.deepEqual(keys(host), ['policy/web-allow/https']);
  assert.deepEqual(host.item('policy/web-allow/https').value, { name: 'https', action: 'deny' });
  assert.equal(host.status('Policy', 'web-allow').ruleCount, 1);
});

test('validate refuses a policy without rules or with a malformed spec', () => {
  const host = new FakeHost('policy-js');
  assert.equal(host.validate(reactor, policy(TWO_RULES)), undefined);
  assert.equal(host.validate(reactor, policy([])), 'policy has no rules');
  assert.match(host.validate(reactor, policy('http')), /^invalid policy spec: /);
});

test('delete withdraws every item', () => {
  const host = new FakeHost('policy-js');
  host.onCreate(reactor, policy(TWO_RULES));
  assert.deepEqual(host.onDelete(reactor, host.get('Policy', 'web-allow')), { tag: 'done' });
  assert.deepEqual(keys(host), []);
});

test('an unavailable store is retried and publishes nothing', () => {
  const host = new FakeHost('policy-js');
  host.failNextStore({ tag: 'unavailable', val: 'etcd is down' });
  const result = host.onCreate(reactor, policy(TWO_RULES));
  assert.equal(result.tag, 'retry');
  assert.match(result.val, /etcd is down/);
  assert.deepEqual(keys(host), []);
  assert.equal(host.status('Policy', 'web-allow'), undefined);
});

test('a malformed rule is a permanent error', () => {
  const host = new FakeHost('policy-js');
  const result = host.onCreate(reactor, policy([{ name: 'http' }]));
  assert.equal(result.tag, 'permanent');
  assert.match(result.val, /needs a name and an action/);
});

test('agent status counts the items applied on each agent', () => {
  const host = new FakeHost('policy-js');
  host.onCreate(reactor, policy(TWO_RULES));
  host.report('policy/web-allow/http', 'edge-1', 'applied');
  host.report('policy/web-allow/http', 'edge-2', 'failed');
  const report = host.report('policy/web-allow/https', 'edge-1', 'applied');
  assert.deepEqual(host.onAgentStatus(reactor, host.get('Policy', 'web-allow'), report), { tag: 'done' });
  assert.deepEqual(host.status('Policy', 'web-allow').agents, { 'edge-1': 2 });
});
