// Makes the `reactor:host/...@0.2.1` imports of reactor-sdk.js resolve, under node, to the
// stand-ins of ./imports/, which the FakeHost installed by a test answers. Loaded by
// ../testing.js, or before anything else with `node --import ./sdk/js/testing/register.js`
// (then a test may import its reactor statically).

import { register } from 'node:module';

const done = Symbol.for('reactor-sdk.testing.registered');
if (!globalThis[done]) {
  globalThis[done] = true;
  register('./hooks.js', import.meta.url);
}
