"""The Policy reactor against the SDK's fake host (run from the repository root:
`PYTHONPATH=sdk/python python3 -m unittest discover -s examples/policy-python`)."""

import unittest

from reactor_sdk_testing import (
    Action_Done,
    Error_Permanent,
    Error_Retry,
    FakeHost,
    ItemState,
    StoreError_Unavailable,
    Target_Labels,
    object_,
)

from app import Reactor

TWO_RULES = [{"name": "http", "action": "allow"}, {"name": "https", "action": "allow"}]


def policy(rules, selector=None):
    spec = {"selector": {"role": "edge"} if selector is None else selector, "rules": rules}
    return object_("Policy", "web-allow", spec, labels={"app": "web"})


class PolicyTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost("policy-python")

    def keys(self):
        return [item.key for item in self.host.items()]

    def test_publishes_one_item_per_rule_to_its_selector_and_counts_them_in_status(self):
        self.assertEqual(self.host.on_create(Reactor(), policy(TWO_RULES)), Action_Done())
        self.assertEqual(self.keys(), ["policy/web-allow/http", "policy/web-allow/https"])
        http = self.host.item("policy/web-allow/http")
        self.assertEqual(http.value, {"name": "http", "action": "allow"})
        self.assertEqual(http.to, Target_Labels([("role", "edge")]))
        self.assertEqual(self.host.status("Policy", "web-allow"), {"ruleCount": 2, "reactor": "policy-python"})
        self.assertEqual(self.host.logs, [("INFO", "policy web-allow publishes 2 rules")])

    def test_an_update_withdraws_the_rules_that_went_away(self):
        old = self.host.put(policy(TWO_RULES))
        self.host.on_create(Reactor(), old)
        result = self.host.on_update(Reactor(), old, policy([{"name": "https", "action": "deny"}]))
        self.assertEqual(result, Action_Done())
        self.assertEqual(self.keys(), ["policy/web-allow/https"])
        self.assertEqual(self.host.item("policy/web-allow/https").value, {"name": "https", "action": "deny"})
        self.assertEqual(self.host.status("Policy", "web-allow")["ruleCount"], 1)

    def test_validate_refuses_a_policy_without_rules_or_with_a_malformed_spec(self):
        self.assertIsNone(self.host.validate(Reactor(), policy(TWO_RULES)))
        self.assertEqual(self.host.validate(Reactor(), policy([])), "policy has no rules")
        refused = self.host.validate(Reactor(), policy("http"))
        self.assertTrue(refused.startswith("invalid policy spec: "), refused)

    def test_delete_withdraws_every_item(self):
        self.host.on_create(Reactor(), policy(TWO_RULES))
        self.assertEqual(self.host.on_delete(Reactor(), self.host.get("Policy", "web-allow")), Action_Done())
        self.assertEqual(self.keys(), [])

    def test_an_unavailable_store_is_retried_and_publishes_nothing(self):
        self.host.fail_next_store(StoreError_Unavailable("etcd is down"))
        result = self.host.on_create(Reactor(), policy(TWO_RULES))
        self.assertIsInstance(result, Error_Retry)
        self.assertIn("etcd is down", result.value)
        self.assertEqual(self.keys(), [])
        self.assertIsNone(self.host.status("Policy", "web-allow"))

    def test_a_malformed_rule_is_a_permanent_error(self):
        result = self.host.on_create(Reactor(), policy([{"name": "http"}]))
        self.assertIsInstance(result, Error_Permanent)
        self.assertIn("needs a name and an action", result.value)

    def test_agent_status_counts_the_items_applied_on_each_agent(self):
        self.host.on_create(Reactor(), policy(TWO_RULES))
        self.host.report("policy/web-allow/http", "edge-1", ItemState.APPLIED)
        self.host.report("policy/web-allow/http", "edge-2", ItemState.FAILED)
        report = self.host.report("policy/web-allow/https", "edge-1", ItemState.APPLIED)
        owner = self.host.get("Policy", "web-allow")
        self.assertEqual(self.host.on_agent_status(Reactor(), owner, report), Action_Done())
        self.assertEqual(self.host.status("Policy", "web-allow")["agents"], {"edge-1": 2})


if __name__ == "__main__":
    unittest.main()
