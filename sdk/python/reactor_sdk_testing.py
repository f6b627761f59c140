"""An in-process fake host for unit tests of `reactor_sdk` reactors with `unittest` (or any
runner), without componentize-py or a server.

    import unittest
    from reactor_sdk_testing import FakeHost, object_, Action_Done, Error_Retry, StoreError_Unavailable
    from app import Reactor

    class PolicyTest(unittest.TestCase):
        def test_publishes_one_item_per_rule(self):
            host = FakeHost("policy-python")
            policy = object_("Policy", "web", {"rules": [{"name": "http", "action": "allow"}]})
            self.assertEqual(host.on_create(Reactor(), policy), Action_Done())
            self.assertEqual(host.item("policy/web/http").value, {"name": "http", "action": "allow"})
            self.assertEqual(host.status("Policy", "web")["ruleCount"], 1)

Put `sdk/python` and the app's folder on `sys.path` (or PYTHONPATH). The fake applies the
host's rules to what a callback does: children it applies are owned by its primary object,
an object it did not create is refused, item keys belong to one object, `set_status`
changes the primary object, and a callback that fails leaves none of its writes. Each
callback helper returns what the host would get: `Action_Done()`,
`Action_RequeueAfter(ms)`, `Error_Retry(message)` or `Error_Permanent(message)`. As the
host shows a failure, `message` is its first line (what `lastError` says) and what
followed (an unexpected exception's traceback) is in `host.logs` as the host logs it:
`("ERROR", "[host] Kind/name failed: <line>\n<traceback>")`.
"""

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import reactor_sdk_wit as wit
from reactor_sdk_wit import (  # noqa: F401 - re-exported for tests
    Action_Done,
    Action_RequeueAfter,
    Err,
    Error_Permanent,
    Error_Retry,
    ItemState,
    ItemStatus,
    Level,
    NimbusError_Denied,
    NimbusError_Invalid,
    NimbusError_Unavailable,
    Object,
    StoreError_Conflict,
    StoreError_Denied,
    StoreError_Invalid,
    StoreError_NotFound,
    StoreError_Unavailable,
    Target_Agents,
    Target_Labels,
)

FAKE_TIME = "2025-01-01T00:00:00Z"
RESERVED_KINDS = ("NimbusItem", "NimbusReport", "Agent", "ComponentRollback", "Credential")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,62}")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_KEY = re.compile(r"[A-Za-z0-9_./:-]{1,512}")


def object_(kind: str, name: str, spec: Any = None, labels: Optional[Dict[str, str]] = None,
            status: Any = None) -> Object:
    """A new object to put or hand to a callback: `spec` and `status` are any JSON."""
    return Object(
        kind=kind,
        name=name,
        labels=list((labels or {}).items()),
        spec=json.dumps({} if spec is None else spec),
        status=None if status is None else json.dumps(status),
        meta=None,
    )


@dataclass
class Item:
    """A Nimbus item as a callback published it."""

    key: str
    value: Any  # parsed
    to: Any  # Target_Labels or Target_Agents
    owner: wit.Owner
    revision: int  # grows each time the value changes


@dataclass
class _World:
    """What a callback's writes change: copied before it runs, put back if it fails."""

    objects: Dict[Tuple[str, str], Object] = field(default_factory=dict)
    items: Dict[str, Item] = field(default_factory=dict)
    reports: Dict[Tuple[str, str], ItemStatus] = field(default_factory=dict)
    revision: int = 0
    uids: int = 0


def _check_state(call: str, state) -> None:
    """Refuses a report state that is not an `ItemState`: a reactor compares states with
    `ItemState` members, so a string would silently match none of them."""
    if not isinstance(state, ItemState):
        states = ", ".join(f"ItemState.{s.name}" for s in ItemState)
        raise TypeError(f"{call}: the state must be an ItemState ({states}), not {state!r}")


def _fail(error) -> None:
    raise Err(error)


class FakeHost:
    """A host in the test's own process (store, Nimbus, log, config) for one component."""

    def __init__(self, component: str = "test"):
        self.component = component
        self.logs: List[Tuple[str, str]] = []  # (level name, message), e.g. ("INFO", "...")
        self._config: Optional[str] = None
        self._config_rev = 0
        self._world = _World()
        self._primary: Optional[Tuple[str, str]] = None
        self._store_failures: list = []
        self._nimbus_failures: list = []

    # ------------------------------------------------------------------ set up, inspect

    def set_config(self, value: Any) -> None:
        """Sets the component's config (any JSON), as the host's config file would."""
        self._config = json.dumps(value)
        self._config_rev += 1

    def put(self, obj: Object) -> Object:
        """Stores `obj` as a user's apply would (its status too, when it has one)."""
        error = _check_object(obj)
        if error is not None:
            raise ValueError(f"FakeHost.put: the host would refuse {obj.kind}/{obj.name}: {error.value}")
        return self._upsert(obj, None)

    def get(self, kind: str, name: str) -> Optional[Object]:
        found = self._world.objects.get((kind, name))
        return copy.deepcopy(found)

    def list(self, kind: str) -> List[Object]:
        return [copy.deepcopy(o) for (k, _), o in sorted(self._world.objects.items()) if k == kind]

    def status(self, kind: str, name: str) -> Optional[Any]:
        """The status of `kind/name`, parsed; `None` when it has none."""
        found = self._world.objects.get((kind, name))
        return None if found is None or found.status is None else json.loads(found.status)

    def items(self) -> List[Item]:
        return [copy.deepcopy(i) for _, i in sorted(self._world.items.items())]

    def item(self, key: str) -> Optional[Item]:
        return copy.deepcopy(self._world.items.get(key))

    def report(self, key: str, agent: str, state: ItemState = ItemState.APPLIED,
               message: Optional[str] = None, revision: int = 1) -> ItemStatus:
        """Records an agent's report on an item, as `sdk.statuses` returns it to its owner.
        `state` is an `ItemState` (`ItemState.FAILED`), as a component gets it: a string is
        refused with a TypeError."""
        _check_state("report", state)
        status = ItemStatus(key=key, agent=agent, state=state, message=message, revision=revision)
        self._world.reports[(key, agent)] = status
        return status

    def fail_next_store(self, error) -> None:
        """The next store call fails with `error` (e.g. `StoreError_Unavailable("down")`)."""
        self._store_failures.append(error)

    def fail_next_nimbus(self, error) -> None:
        """The next Nimbus call fails with `error` (e.g. `NimbusError_Unavailable("down")`)."""
        self._nimbus_failures.append(error)

    # ------------------------------------------------------------------ callbacks

    def run(self, function: Callable[[], Any]) -> Any:
        """Runs `function` with this host installed, outside any callback."""
        previous = wit.install(self)
        try:
            return function()
        finally:
            wit.install(previous)

    def describe(self, reactor):
        return self.run(reactor.describe)

    def validate(self, reactor, obj: Object) -> Optional[str]:
        """`None` when `reactor` admits `obj`, else its refusal message."""
        try:
            self.run(lambda: reactor.validate(obj))
        except Err as refused:
            return refused.value
        return None

    def on_create(self, reactor, obj: Object):
        stored = self.put(obj)
        return self._callback(stored, lambda: reactor.on_create(copy.deepcopy(stored)))

    def on_update(self, reactor, old: Object, new: Object):
        stored = self.put(new)
        return self._callback(stored, lambda: reactor.on_update(old, copy.deepcopy(stored)))

    def on_delete(self, reactor, obj: Object):
        """Marks `obj` deleting and runs `on_delete`; on `Action_Done` the object goes, with
        the children it owns, as the host removes them."""
        if (obj.kind, obj.name) not in self._world.objects:
            self.put(obj)
        stored = self._world.objects[(obj.kind, obj.name)]
        stored.meta.deleting = True
        result = self._callback(stored, lambda: reactor.on_delete(copy.deepcopy(stored)))
        if result == Action_Done():
            self._remove_with_children(stored.kind, stored.name)
        return result

    def on_agent_status(self, reactor, owner: Object, report: ItemStatus):
        _check_state("on_agent_status", report.state)
        stored = self.put(owner)
        self._world.reports[(report.key, report.agent)] = report
        return self._callback(stored, lambda: reactor.on_agent_status(copy.deepcopy(stored), report))

    def _callback(self, primary: Object, function: Callable[[], Any]):
        before = copy.deepcopy(self._world)
        self._primary = (primary.kind, primary.name)
        try:
            return self.run(function)
        except Err as failed:
            self._world = before
            return self._shown(primary, failed.value)
        finally:
            self._primary = None

    def _shown(self, primary: Object, error):
        """`error` as the host shows it: the first line returned, the rest logged."""
        if not isinstance(error, (Error_Retry, Error_Permanent)):
            return error
        line, _, detail = str(error.value).lstrip().partition("\n")
        line, detail = line.rstrip(), detail.rstrip()
        if detail.strip():
            self.logs.append(("ERROR", f"[host] {primary.kind}/{primary.name} failed: {line}\n{detail}"))
        return type(error)(line)

    # ------------------------------------------------------------------ the world

    def _upsert(self, obj: Object, owner: Optional[wit.Owner]) -> Object:
        world = self._world
        world.revision += 1
        current = world.objects.get((obj.kind, obj.name))
        if current is None:
            world.uids += 1
            stored = Object(
                kind=obj.kind, name=obj.name, labels=list(obj.labels), spec=obj.spec,
                status=obj.status,
                meta=wit.Meta(uid=f"fake-uid-{world.uids}", revision=world.revision, generation=1,
                              created=FAKE_TIME, updated=FAKE_TIME, finalizers=[],
                              deleting=False, owner=owner),
            )
        else:
            stored = copy.deepcopy(current)
            stored.meta.generation += int(current.spec != obj.spec)
            stored.meta.revision = world.revision
            stored.labels, stored.spec = list(obj.labels), obj.spec
            if obj.status is not None:
                stored.status = obj.status
            if owner is not None:
                stored.meta.owner = owner
        world.objects[(obj.kind, obj.name)] = stored
        return copy.deepcopy(stored)

    def _remove_with_children(self, kind: str, name: str) -> None:
        gone = self._world.objects.pop((kind, name), None)
        if gone is None:
            return
        for child in [o for o in self._world.objects.values()
                      if o.meta.owner is not None and o.meta.owner.uid == gone.meta.uid]:
            self._remove_with_children(child.kind, child.name)

    def _owner(self, call: str) -> wit.Owner:
        if self._primary is None:
            _fail(StoreError_Denied(f"{call} needs a callback's primary object: call it from a callback"))
        stored = self._world.objects.get(self._primary)
        if stored is None:
            _fail(StoreError_Unavailable(f"{'/'.join(self._primary)} is not in the store"))
        kind, name = self._primary
        return wit.Owner(kind=kind, name=name, uid=stored.meta.uid, component=self.component)

    def _check_mine(self, obj: Object, mine: wit.Owner) -> None:
        held = obj.meta.owner
        if held is None:
            _fail(StoreError_Denied(f"{obj.kind}/{obj.name} is not this reactor's to write: it was "
                                    "not created by a reactor, so no reactor may take it over"))
        if (held.kind, held.name, held.component) != (mine.kind, mine.name, mine.component):
            _fail(StoreError_Denied(f"{obj.kind}/{obj.name} is not this reactor's to write: it is "
                                    f"owned by {held.kind}/{held.name} (component {held.component})"))

    def _store_failure(self) -> None:
        if self._store_failures:
            _fail(self._store_failures.pop(0))

    def _nimbus_failure(self) -> None:
        if self._nimbus_failures:
            _fail(self._nimbus_failures.pop(0))

    # ------------------------------------------------------------------ the imports

    def _store_get(self, kind, name):
        self._store_failure()
        _check_kind(kind)
        return self.get(kind, name)

    def _store_list(self, kind, selector):
        self._store_failure()
        _check_kind(kind)
        return [o for o in self.list(kind) if all(tuple(p) in o.labels for p in selector)]

    def _store_apply(self, obj):
        self._store_failure()
        error = _check_object(obj)
        if error is not None:
            _fail(error)
        if self._primary == (obj.kind, obj.name):
            _fail(StoreError_Denied(f"{obj.kind}/{obj.name} is the callback's own object: "
                                    "change its status with set-status"))
        mine = self._owner("store.apply")
        current = self._world.objects.get((obj.kind, obj.name))
        if current is not None:
            self._check_mine(current, mine)
        expected = obj.meta.revision if obj.meta is not None else 0
        if expected and (current is None or current.meta.revision != expected):
            _fail(StoreError_Conflict(f"conflict on {obj.kind}/{obj.name}: expected revision {expected}"))
        wanted = copy.deepcopy(obj)
        wanted.status = None
        return self._upsert(wanted, mine)

    def _store_delete(self, kind, name):
        self._store_failure()
        _check_kind(kind)
        mine = self._owner("store.delete")
        current = self._world.objects.get((kind, name))
        if current is None:
            return False
        self._check_mine(current, mine)
        self._remove_with_children(kind, name)
        return True

    def _store_set_status(self, text):
        self._store_failure()
        _check_json("status", text, StoreError_Invalid)
        if self._primary is None:
            _fail(StoreError_Denied("store.set_status needs a callback's primary object"))
        stored = self._world.objects.get(self._primary)
        if stored is None:
            _fail(StoreError_NotFound())
        self._world.revision += 1
        stored.status = text
        stored.meta.revision = self._world.revision

    def _publisher(self, call: str) -> Tuple[str, str]:
        if self._primary is None:
            _fail(NimbusError_Denied(f"{call} needs a callback's primary object"))
        return self._primary

    def _check_item_owner(self, key: str, publisher: Tuple[str, str]) -> None:
        item = self._world.items.get(key)
        if item is not None and (item.owner.kind, item.owner.name) != publisher:
            _fail(NimbusError_Denied(f"item {key} belongs to {item.owner.kind}/{item.owner.name}"))

    def _nimbus_publish(self, key, text, to):
        self._nimbus_failure()
        publisher = self._publisher("nimbus.publish")
        _check_key(key)
        value = _check_json(f"value of item {key}", text, NimbusError_Invalid)
        self._check_item_owner(key, publisher)
        old = self._world.items.get(key)
        revision = 1 if old is None else old.revision + int(old.value != value)
        stored = self._world.objects.get(publisher)
        owner = wit.Owner(kind=publisher[0], name=publisher[1],
                          uid=stored.meta.uid if stored else "", component=self.component)
        self._world.items[key] = Item(key=key, value=value, to=copy.deepcopy(to), owner=owner,
                                      revision=revision)

    def _nimbus_unpublish(self, key):
        self._nimbus_failure()
        publisher = self._publisher("nimbus.unpublish")
        _check_key(key)
        self._check_item_owner(key, publisher)
        self._world.items.pop(key, None)
        self._world.reports = {k: r for k, r in self._world.reports.items() if k[0] != key}

    def _keys_of(self, call: str, prefix: str) -> List[str]:
        publisher = self._publisher(call)
        return [k for k, i in sorted(self._world.items.items())
                if k.startswith(prefix) and (i.owner.kind, i.owner.name) == publisher]

    def _nimbus_published(self, prefix):
        self._nimbus_failure()
        return self._keys_of("nimbus.published", prefix)

    def _nimbus_statuses(self, prefix, agent=None, call="nimbus.statuses"):
        self._nimbus_failure()
        mine = set(self._keys_of(call, prefix))
        return [copy.deepcopy(r) for (key, by), r in sorted(self._world.reports.items())
                if key in mine and agent in (None, by)]

    def _nimbus_agent_statuses(self, prefix, agent):
        return self._nimbus_statuses(prefix, agent, "nimbus.agent_statuses")

    def _log_log(self, level: Level, message: str) -> None:
        self.logs.append((level.name, message))

    def _config_get(self):
        return self._config

    def _config_revision(self):
        return self._config_rev


def _check_kind(kind: str) -> None:
    if kind in RESERVED_KINDS:
        _fail(StoreError_Denied(f"kind {kind} is reserved to the host: use the nimbus import"))
    if not _KIND.fullmatch(kind):
        _fail(StoreError_Invalid(f"kind {kind!r} is invalid: it must match [A-Za-z][A-Za-z0-9-]*"))


def _check_json(what: str, text: str, error):
    try:
        return json.loads(text)
    except (TypeError, ValueError) as e:
        _fail(error(f"{what} is not JSON: {e}"))


def _check_key(key: str) -> None:
    if not _KEY.fullmatch(key) or key.startswith("/"):
        _fail(NimbusError_Invalid(f"item key {key!r} is invalid: use letters, digits and -_./: "
                                  "(at most 512, not starting with /)"))


def _check_object(obj: Object):
    """The store error the host would refuse `obj` with, or `None`."""
    try:
        _check_kind(obj.kind)
        if not _NAME.fullmatch(obj.name):
            _fail(StoreError_Invalid(f"name {obj.name!r} is invalid: it must be lowercase letters, "
                                     "digits and '-', start and end with a letter or digit"))
        _check_json(f"spec of {obj.kind}/{obj.name}", obj.spec, StoreError_Invalid)
    except Err as refused:
        return refused.value
    return None
