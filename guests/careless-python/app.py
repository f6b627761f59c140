"""A test guest in Python that fails as careless code does: `on_create` looks the spec's
plan up without checking it, so a Careless whose plan is unknown raises KeyError from the
line marked below (its traceback names this file and that line)."""

import reactor_sdk as sdk

CPU = {"gold": 4, "silver": 2}


class Reactor(sdk.Reactor):
    def describe(self):
        return sdk.describe("careless-python", ["Careless"])

    def on_create(self, obj):
        plan = sdk.spec(obj).get("plan")
        sdk.set_status({"cpu": cpu_of(plan)})


def cpu_of(plan):
    return CPU[plan]  # raises KeyError: the line a test looks for
