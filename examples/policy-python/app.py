"""The Policy reactor (the example every language implements) in Python: publishes one Nimbus item per rule to the
agents its selector matches, records what it did in status, and counts per agent the items
applied there. Same behaviour as examples/policy-rust, so either can replace the other."""

import reactor_sdk as sdk

NAME = "policy-python"


def prefix(policy: str) -> str:
    return f"policy/{policy}/"


def rules_of(obj) -> list:
    """The spec's rules, checked: a list of {name, action} strings."""
    spec = sdk.spec(obj)
    selector = spec.get("selector") or {}
    if not isinstance(selector, dict) or not all(isinstance(v, str) for v in selector.values()):
        raise sdk.Permanent("spec.selector is not a map of strings")
    rules = spec.get("rules") or []
    if not isinstance(rules, list):
        raise sdk.Permanent("spec.rules is not a list")
    for rule in rules:
        if not (isinstance(rule, dict) and isinstance(rule.get("name"), str) and isinstance(rule.get("action"), str)):
            raise sdk.Permanent(f"rule {rule!r} needs a name and an action")
    return rules


def recount(status, under):
    """Sets status.agents from every agent's reports now, so a count whose report a crash kept
    from on_agent_status is right again at the next reconcile: the agents with reports, and
    those counted before at 0 if they have none. No reports and no counts: the key stays out."""
    agents = status.get("agents")
    agents = {agent: 0 for agent in agents} if isinstance(agents, dict) else {}
    for report in sdk.statuses(under):
        agents[report.agent] = agents.get(report.agent, 0) + (1 if sdk.applied(report) else 0)
    if agents:
        status["agents"] = agents


class Reactor(sdk.Reactor):
    def describe(self):
        return sdk.describe(NAME, ["Policy"], resync_ms=60_000, handles_delete=True)

    def validate(self, obj):
        try:
            rules = rules_of(obj)
        except Exception as error:
            raise ValueError(f"invalid policy spec: {error}")
        if not rules:
            raise ValueError("policy has no rules")

    def on_create(self, obj):
        """Level-triggered: makes the published items match the rules, whatever was there."""
        spec = sdk.spec(obj)
        selector = spec.get("selector") or {}
        keep = []
        for rule in rules_of(obj):
            key = prefix(obj.name) + rule["name"]
            sdk.publish(key, {"name": rule["name"], "action": rule["action"]}, selector=selector)
            keep.append(key)
        for key in sdk.published(prefix(obj.name)):
            if key not in keep:
                sdk.unpublish(key)
        status = sdk.status(obj)
        status["ruleCount"] = len(keep)
        status["reactor"] = NAME
        recount(status, prefix(obj.name))
        sdk.set_status(status)
        sdk.log.info(f"policy {obj.name} publishes {len(keep)} rules")

    # on_update(old, new) defaults to on_create(new).

    def on_delete(self, obj):
        for key in sdk.published(prefix(obj.name)):
            sdk.unpublish(key)

    def on_agent_status(self, owner, report):
        """Records status.agents.<agent> = how many of this policy's items it applied."""
        applied = sum(
            1 for s in sdk.agent_statuses(prefix(owner.name), report.agent) if sdk.applied(s)
        )
        status = sdk.status(owner)
        agents = status.get("agents")
        if not isinstance(agents, dict):
            agents = status["agents"] = {}
        agents[report.agent] = applied
        sdk.set_status(status)
