// Unit tests of reactors under node (`node --test`), without componentize-js or a server:
//
//   import test from 'node:test';
//   import assert from 'node:assert/strict';
//   import { FakeHost, object } from '../../sdk/js/testing.js';
//   const { reactor } = await import('./policy.js');   // after testing.js: see below
//
//   test('publishes one item per rule', () => {
//     const host = new FakeHost('policy-js');
//     const policy = object('Policy', 'web', { rules: [{ name: 'http', action: 'allow' }] });
//     assert.deepEqual(host.onCreate(reactor, policy), { tag: 'done' });
//     assert.deepEqual(host.item('policy/web/http').value, { name: 'http', action: 'allow' });
//   });
//
// Importing this module registers a resolve hook (./testing/register.js) under which the
// SDK's `reactor:host/...@0.2.1` imports are stand-ins answered by the FakeHost a callback
// runs through; the reactor must be imported after it (`await import(...)`), or the hook
// loaded first with `node --import ./sdk/js/testing/register.js --test ...`.
//
// Callback helpers (`onCreate`, `onUpdate`, `onDelete`, `onAgentStatus`) return what the
// host would get: `{tag: 'done'}`, `{tag: 'requeue-after', val: 5000n}`,
// `{tag: 'retry', val: message}` or `{tag: 'permanent', val: message}`; `validate` returns
// the refusal message or `undefined`. As the host shows a failure, `message` is its first
// line (what `lastError` says) and what followed (an unexpected exception's stack) is in
// `host.logs` as the host logs it: `{level: 'error', message: '[host] Kind/name failed: ...'}`.

import './testing/register.js';

export { FakeHost, object } from './testing/fake-host.js';
