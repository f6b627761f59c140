"""The Tenant reactor against the SDK's fake host (run from the repository root:
`PYTHONPATH=sdk/python python3 -m unittest discover -s examples/tenant-python`)."""

import json
import unittest

from reactor_sdk_testing import (
    Action_Done,
    Error_Permanent,
    Error_Retry,
    FakeHost,
    StoreError_Conflict,
    object_,
)

from app import Reactor


def tenant(namespaces):
    spec = {"plan": "gold", "namespaces": namespaces, "selector": {"role": "edge"}}
    return object_("Tenant", "acme", spec)


class TenantTest(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost("tenant-python")

    def names(self, kind):
        return [o.name for o in self.host.list(kind)]

    def with_plan(self):
        self.host.put(object_("Plan", "gold", {"cpu": 2}))

    def test_without_its_plan_a_tenant_is_not_ready_and_not_retried(self):
        self.assertEqual(self.host.on_create(Reactor(), tenant(["dev"])), Action_Done())
        self.assertEqual(self.host.status("Tenant", "acme"),
                         {"ready": False, "reason": "PlanNotFound", "plan": "gold"})
        self.assertEqual(self.names("TenantNamespace"), [])
        self.assertEqual(self.host.items(), [])

    def test_with_its_plan_a_tenant_owns_one_namespace_and_one_item_per_namespace(self):
        self.with_plan()
        self.assertEqual(self.host.on_create(Reactor(), tenant(["dev", "prod"])), Action_Done())
        self.assertEqual(self.names("TenantNamespace"), ["acme-dev", "acme-prod"])
        dev = self.host.get("TenantNamespace", "acme-dev")
        self.assertEqual((dev.meta.owner.kind, dev.meta.owner.name), ("Tenant", "acme"))
        self.assertEqual(json.loads(dev.spec), {"tenant": "acme", "namespace": "dev", "cpu": 2})
        self.assertEqual(self.host.item("tenant/acme/prod").value,
                         {"tenant": "acme", "namespace": "prod", "cpu": 2})
        self.assertEqual(self.host.status("Tenant", "acme"), {"ready": True, "plan": "gold", "namespaces": 2})

    def test_a_namespace_no_longer_listed_loses_its_child_and_its_item(self):
        self.with_plan()
        old = self.host.put(tenant(["dev", "prod"]))
        self.host.on_create(Reactor(), old)
        self.assertEqual(self.host.on_update(Reactor(), old, tenant(["prod"])), Action_Done())
        self.assertEqual(self.names("TenantNamespace"), ["acme-prod"])
        self.assertEqual([i.key for i in self.host.items()], ["tenant/acme/prod"])

    def test_a_child_name_taken_by_a_user_object_is_a_permanent_error(self):
        self.with_plan()
        self.host.put(object_("TenantNamespace", "acme-dev", {}))
        result = self.host.on_create(Reactor(), tenant(["dev"]))
        self.assertIsInstance(result, Error_Permanent)
        self.assertIn("TenantNamespace/acme-dev", result.value)
        self.assertEqual(self.host.items(), [])

    def test_validate_refuses_a_tenant_without_a_plan(self):
        refused = self.host.validate(Reactor(), object_("Tenant", "acme", {"plan": ""}))
        self.assertEqual(refused, "invalid tenant spec: spec.plan names no Plan")
        self.assertIsNone(self.host.validate(Reactor(), tenant([])))

    def test_delete_withdraws_the_items_and_the_children_go_with_the_tenant(self):
        self.with_plan()
        self.host.on_create(Reactor(), tenant(["dev"]))
        self.assertEqual(self.host.on_delete(Reactor(), self.host.get("Tenant", "acme")), Action_Done())
        self.assertEqual(self.host.items(), [])
        self.assertEqual(self.names("TenantNamespace"), [])

    def test_a_conflicting_store_is_retried(self):
        self.with_plan()
        self.host.fail_next_store(StoreError_Conflict("Plan/gold changed"))
        result = self.host.on_create(Reactor(), tenant(["dev"]))
        self.assertIsInstance(result, Error_Retry)
        self.assertIn("Plan/gold changed", result.value)
        self.assertEqual(self.names("TenantNamespace"), [])


if __name__ == "__main__":
    unittest.main()
