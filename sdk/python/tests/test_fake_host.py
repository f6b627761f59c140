"""The fake host applies the host's rules to what a callback does (run from the repository
root: `PYTHONPATH=sdk/python python3 -m unittest discover -s sdk/python/tests`)."""

import inspect
import unittest

import reactor_sdk as sdk
from reactor_sdk_testing import (
    Action_Done,
    Action_RequeueAfter,
    Error_Permanent,
    Error_Retry,
    FakeHost,
    ItemState,
    ItemStatus,
    NimbusError_Unavailable,
    Target_Agents,
    object_,
)


class Parent(sdk.Reactor):
    """Applies Child/<name>-child, publishes own/<name>, sets status from the config."""

    def describe(self):
        return sdk.describe("parent", ["Parent"], owns=["Child"])

    def on_create(self, obj):
        sdk.apply("Child", f"{obj.name}-child", {"of": obj.name})
        sdk.publish(f"own/{obj.name}", 1, agents=["edge-1"])
        sdk.set_status({"greeting": sdk.config()})
        if sdk.spec(obj).get("fail"):
            raise sdk.Retry("asked to fail")
        if sdk.spec(obj).get("take"):
            sdk.delete("Child", sdk.spec(obj)["take"])
        return sdk.requeue_after(5000)


class Counter(sdk.Reactor):
    """Records in status, per agent, the state of its latest report by name."""

    def describe(self):
        return sdk.describe("counter", ["Parent"])

    def on_agent_status(self, owner, report):
        sdk.set_status({**sdk.status(owner), report.agent: sdk.state(report)})


class Careless(sdk.Reactor):
    """Reads a spec field that may be missing (a KeyError), or recurses until told to fail."""

    def describe(self):
        return sdk.describe("careless", ["Parent"])

    def on_create(self, obj):
        spec = sdk.spec(obj)
        if "depth" in spec:
            return self.deeper(spec["depth"])
        return spec["plan"]  # the line the traceback names

    def deeper(self, depth):  # with `back`: frames Python does not fold as repeats
        if depth == 0:
            raise ValueError("too deep\nsecond line")
        return self.back(depth - 1)

    def back(self, depth):
        return self.deeper(depth)


class FakeHostTest(unittest.TestCase):
    def test_an_unexpected_exception_keeps_its_traceback_in_the_log(self):
        host = FakeHost("careless")
        result = host.on_create(Careless(), object_("Parent", "p"))
        self.assertEqual(result, Error_Retry("KeyError: 'plan'"))
        self.assertEqual(len(host.logs), 1, host.logs)
        level, message = host.logs[0]
        self.assertEqual(level, "ERROR")
        lines = message.split("\n")
        self.assertEqual(lines[0], "[host] Parent/p failed: KeyError: 'plan'")
        self.assertEqual(lines[1], "Traceback (most recent call last):")
        source = inspect.getsource(inspect.getmodule(Careless)).split("\n")
        line = next(n for n, text in enumerate(source, 1) if "the line the traceback names" in text)
        self.assertIn(f'File "{__file__}", line {line}, in on_create', message)
        self.assertEqual(lines[-1], "KeyError: 'plan'")
        self.assertNotIn("reactor_sdk.py", message, "the SDK's own frame is left out")

    def test_a_long_traceback_is_cut_from_the_middle_and_says_so(self):
        host = FakeHost("careless")
        result = host.on_create(Careless(), object_("Parent", "p", {"depth": 100}))
        self.assertEqual(result, Error_Retry("ValueError: too deep second line"))
        traceback = host.logs[0][1].split("\n", 1)[1]
        lines = traceback.split("\n")
        self.assertLessEqual(len(lines), sdk.TRACEBACK_LINES)
        self.assertLessEqual(len(traceback.encode()), sdk.TRACEBACK_BYTES)
        self.assertEqual(lines[0], "Traceback (most recent call last):")
        self.assertRegex(lines[1], r'^  File ".*test_fake_host.py", line \d+, in on_create$')
        self.assertRegex(lines[3], r"^  \.\.\. \d+ lines cut by the SDK \.\.\.$")
        self.assertEqual(lines[-2:], ["ValueError: too deep", "second line"])
        self.assertIn("in deeper", lines[-4])

    def test_retry_and_permanent_carry_their_message_alone(self):
        host = FakeHost("parent")
        self.assertEqual(host.on_create(Parent(), object_("Parent", "p", {"fail": True})),
                         Error_Retry("asked to fail"))
        self.assertEqual(host.logs, [])


    def test_a_callback_owns_what_it_applies_and_publishes(self):
        host = FakeHost("parent")
        host.set_config("hello")
        self.assertEqual(host.on_create(Parent(), object_("Parent", "p")), Action_RequeueAfter(5000))
        child = host.get("Child", "p-child")
        self.assertEqual((child.meta.owner.kind, child.meta.owner.name, child.meta.owner.component),
                         ("Parent", "p", "parent"))
        self.assertEqual(child.meta.owner.uid, host.get("Parent", "p").meta.uid)
        self.assertEqual(host.item("own/p").to, Target_Agents(["edge-1"]))
        self.assertEqual(host.status("Parent", "p"), {"greeting": "hello"})

    def test_a_failed_callback_leaves_none_of_its_writes(self):
        host = FakeHost("parent")
        self.assertEqual(host.on_create(Parent(), object_("Parent", "p", {"fail": True})),
                         Error_Retry("asked to fail"))
        self.assertIsNone(host.get("Child", "p-child"))
        self.assertIsNone(host.item("own/p"))
        self.assertIsNone(host.status("Parent", "p"))

    def test_injected_failures_and_refusals_map_like_the_host(self):
        host = FakeHost("parent")
        host.fail_next_nimbus(NimbusError_Unavailable("down"))
        result = host.on_create(Parent(), object_("Parent", "p"))
        self.assertEqual(result, Error_Retry("nimbus Unavailable: down"))
        host.put(object_("Child", "users"))
        result = host.on_create(Parent(), object_("Parent", "p", {"take": "users"}))
        self.assertIsInstance(result, Error_Permanent)
        self.assertIn("not created by a reactor", result.value)
        self.assertIsNotNone(host.get("Child", "users"))

    def test_delete_removes_the_object_and_its_children(self):
        host = FakeHost("parent")
        host.on_create(Parent(), object_("Parent", "p"))
        self.assertEqual(host.on_delete(Parent(), host.get("Parent", "p")), Action_Done())
        self.assertEqual((host.get("Parent", "p"), host.get("Child", "p-child")), (None, None))

    def test_a_conditions_time_moves_only_with_its_status(self):
        status = sdk.set_condition({"plan": "gold"}, None, "Ready", "False",
                                   reason="PlanNotFound", observed_generation=1,
                                   at="2026-01-01T00:00:00Z")
        self.assertEqual(status["conditions"], [{
            "type": "Ready", "status": "False", "reason": "PlanNotFound", "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}])
        still = sdk.set_condition({}, status, "Ready", "False", reason="PlanMissing",
                                  at="2026-01-05T00:00:00Z")
        self.assertEqual(sdk.find_condition(still, "Ready")["lastTransitionTime"],
                         "2026-01-01T00:00:00Z")
        self.assertEqual(sdk.find_condition(still, "Ready")["reason"], "PlanMissing")
        ready = sdk.set_condition({}, still, "Ready", "True", at="2026-01-06T00:00:00Z")
        self.assertTrue(sdk.is_condition_true(ready, "Ready"))
        self.assertEqual(sdk.find_condition(ready, "Ready")["lastTransitionTime"],
                         "2026-01-06T00:00:00Z")
        self.assertIsNone(sdk.find_condition(ready, "Synced"))
        self.assertRegex(sdk.now(), r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_reports_take_an_item_state_and_refuse_a_string(self):
        host = FakeHost("counter")
        owner = object_("Parent", "p")
        failed = host.report("own/p", "edge-1", ItemState.FAILED, message="no such interface")
        self.assertEqual(host.on_agent_status(Counter(), owner, failed), Action_Done())
        pending = host.report("own/p", "edge-2", ItemState.PENDING, message="waiting for eth0")
        self.assertEqual(host.on_agent_status(Counter(), owner, pending), Action_Done())
        self.assertEqual(host.status("Parent", "p"), {"edge-1": "failed", "edge-2": "pending"})
        with self.assertRaisesRegex(TypeError, r"^report: the state must be an ItemState "
                                    r"\(ItemState.PENDING, ItemState.APPLIED, ItemState.FAILED, "
                                    r"ItemState.REMOVED\), not 'failed'$"):
            host.report("own/p", "edge-1", "failed")
        as_string = ItemStatus(key="own/p", agent="edge-1", state="applied", message=None, revision=1)
        with self.assertRaisesRegex(TypeError, r"^on_agent_status: the state must be an ItemState .*, not 'applied'$"):
            host.on_agent_status(Counter(), owner, as_string)
        self.assertEqual(host.status("Parent", "p"), {"edge-1": "failed", "edge-2": "pending"})

    def test_a_host_call_without_a_fake_says_how_to_install_one(self):
        with self.assertRaisesRegex(RuntimeError, "reactor_sdk_testing.FakeHost"):
            sdk.get("Parent", "p")


if __name__ == "__main__":
    unittest.main()
