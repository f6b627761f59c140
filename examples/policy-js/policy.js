// The Policy reactor (the example every language implements) in JavaScript: publishes one Nimbus item per rule to the
// agents its selector matches, records what it did in status, and counts per agent the
// items applied there. Same behaviour as examples/policy-rust, so either can replace the
// other.

import {
  agentStatuses, defineReactor, log, permanent, publish, published, setStatus, spec, status,
  statuses, unpublish,
} from '../../sdk/js/reactor-sdk.js';

const NAME = 'policy-js';

const prefix = (policy) => `policy/${policy}/`;

/**
 * Sets status.agents from every agent's reports now, so a count whose report a crash kept
 * from onAgentStatus is right again at the next reconcile: the agents with reports, and those
 * counted before at 0 if they have none. No reports and no counts: the key stays out.
 */
function recount(current, under) {
  const before = current.agents && typeof current.agents === 'object' ? current.agents : {};
  const agents = Object.fromEntries(Object.keys(before).map((agent) => [agent, 0]));
  for (const report of statuses(under)) {
    agents[report.agent] = (agents[report.agent] ?? 0) + (report.state === 'applied' ? 1 : 0);
  }
  return Object.keys(agents).length > 0 ? { ...current, agents } : current;
}

/** The spec's selector and rules, checked: rules are {name, action} strings. */
function policySpec(obj) {
  const s = spec(obj);
  const selector = s.selector ?? {};
  if (typeof selector !== 'object' || Array.isArray(selector)
      || !Object.values(selector).every((v) => typeof v === 'string')) {
    throw permanent('spec.selector is not a map of strings');
  }
  const rules = s.rules ?? [];
  if (!Array.isArray(rules)) throw permanent('spec.rules is not a list');
  for (const rule of rules) {
    if (!rule || typeof rule.name !== 'string' || typeof rule.action !== 'string') {
      throw permanent(`rule ${JSON.stringify(rule)} needs a name and an action`);
    }
  }
  return { selector, rules };
}

export const reactor = defineReactor({
  describe: () => ({ name: NAME, kinds: ['Policy'], resyncPeriodMs: 60000, handlesDelete: true }),

  validate(obj) {
    let rules;
    try {
      ({ rules } = policySpec(obj));
    } catch (e) {
      throw new Error(`invalid policy spec: ${e.val ?? e.message ?? e}`);
    }
    if (rules.length === 0) throw new Error('policy has no rules');
  },

  // Level-triggered: makes the published items match the rules, whatever was there.
  // onUpdate(old, new) defaults to onCreate(new).
  onCreate(obj) {
    const { selector, rules } = policySpec(obj);
    const keep = [];
    for (const rule of rules) {
      const key = prefix(obj.name) + rule.name;
      publish(key, { name: rule.name, action: rule.action }, { selector });
      keep.push(key);
    }
    for (const key of published(prefix(obj.name))) {
      if (!keep.includes(key)) unpublish(key);
    }
    setStatus(recount({ ...status(obj), ruleCount: keep.length, reactor: NAME }, prefix(obj.name)));
    log.info(`policy ${obj.name} publishes ${keep.length} rules`);
  },

  onDelete(obj) {
    for (const key of published(prefix(obj.name))) unpublish(key);
  },

  // Records status.agents.<agent> = how many of this policy's items that agent applied.
  onAgentStatus(owner, report) {
    const applied = agentStatuses(prefix(owner.name), report.agent)
      .filter((s) => s.state === 'applied').length;
    const current = status(owner);
    const agents = current.agents && typeof current.agents === 'object' ? current.agents : {};
    agents[report.agent] = applied;
    setStatus({ ...current, agents });
  },
});
