"""The Tenant reactor in Python (same behaviour as examples/tenant-rust): a Tenant names a
Plan (referenced, not owned) and lists namespaces. With its Plan present it owns one
TenantNamespace per namespace (the Plan's cpu copied in), publishes one Nimbus item
tenant/<tenant>/<ns> per namespace to the agents its selector matches, and reports ready.
The host runs it again when the Plan changes or a child is changed by anyone else, and
deletes the children when the Tenant goes."""

import reactor_sdk as sdk

NAME = "tenant-python"
CHILD_KIND = "TenantNamespace"


def prefix(tenant: str) -> str:
    return f"tenant/{tenant}/"


def tenant_spec(obj):
    spec = sdk.spec(obj)
    plan = spec.get("plan")
    if not isinstance(plan, str) or not plan:
        raise sdk.Permanent("spec.plan names no Plan")
    namespaces = spec.get("namespaces") or []
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        raise sdk.Permanent("spec.namespaces is not a list of names")
    selector = spec.get("selector") or {}
    if not isinstance(selector, dict) or not all(isinstance(v, str) for v in selector.values()):
        raise sdk.Permanent("spec.selector is not a map of strings")
    return plan, namespaces, selector


class Reactor(sdk.Reactor):
    def describe(self):
        return sdk.describe(
            NAME,
            ["Tenant"],
            handles_delete=True,
            references=[("Plan", "spec.plan")],
            owns=[CHILD_KIND],
        )

    def validate(self, obj):
        try:
            tenant_spec(obj)
        except Exception as error:
            raise ValueError(f"invalid tenant spec: {error}")

    def on_create(self, obj):
        plan_name, namespaces, selector = tenant_spec(obj)
        plan = sdk.get("Plan", plan_name)
        if plan is None:
            # Not a retry: the host runs the Tenant again when the Plan appears.
            sdk.set_status({"ready": False, "reason": "PlanNotFound", "plan": plan_name})
            return
        cpu = sdk.spec(plan).get("cpu")
        children, items = [], []
        for namespace in namespaces:
            wanted = {"tenant": obj.name, "namespace": namespace, "cpu": cpu}
            name = f"{obj.name}-{namespace}"
            sdk.apply(CHILD_KIND, name, wanted, {"tenant": obj.name})
            children.append(name)
            key = prefix(obj.name) + namespace
            sdk.publish(key, wanted, selector=selector)
            items.append(key)
        # Children and items no longer listed go.
        for old in sdk.list_objects(CHILD_KIND, {"tenant": obj.name}):
            owner = sdk.owner(old)
            mine = owner is not None and owner.kind == "Tenant" and owner.name == obj.name
            if mine and old.name not in children:
                sdk.delete(CHILD_KIND, old.name)
        for key in sdk.published(prefix(obj.name)):
            if key not in items:
                sdk.unpublish(key)
        sdk.set_status({"ready": True, "plan": plan_name, "namespaces": len(namespaces)})

    # on_update(old, new) defaults to on_create(new).

    def on_delete(self, obj):
        """Only the items: the host deletes the children (they are owned)."""
        for key in sdk.published(prefix(obj.name)):
            sdk.unpublish(key)
