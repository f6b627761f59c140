// A test guest in JavaScript that fails as careless code does: onCreate looks the spec's plan
// up without checking it, so a CarelessJs whose plan is unknown throws a TypeError from the
// line marked below (its stack names this file and that line).

import { defineReactor, setStatus, spec } from '../../sdk/js/reactor-sdk.js';

const PLANS = { gold: { cpu: 4 }, silver: { cpu: 2 } };

function cpuOf(plan) {
  return PLANS[plan].cpu; // throws TypeError: the line a test looks for
}

export const reactor = defineReactor({
  describe: () => ({ name: 'careless-js', kinds: ['CarelessJs'] }),

  onCreate(obj) {
    setStatus({ cpu: cpuOf(spec(obj).plan) });
  },
});
