"""Write reactor-host components in Python (componentize-py).

Subclass `Reactor` (world `controller`) or `Descriptor` (world `descriptor`) in the app
module, under the name componentize-py looks for (`Reactor` or `KvDescriptor`), and
override only the callbacks you need: every callback has a default, as in the Rust SDK.

What the SDK takes off your hands:

- JSON: `spec(obj)`, `status(obj)` and `labels(obj)` give dicts; `set_status`, `publish`
  and `apply` take any JSON-serialisable value.
- Results: a callback returns `None` (done) or `requeue_after(ms)`. Raise `Retry(msg)` or
  `Permanent(msg)` to fail; a failed `store` / `nimbus` call raises an error that becomes
  the right one (unavailable and conflict retry, the rest are permanent), a bad JSON spec
  is permanent, and any other exception retries with its message, so it shows in
  `status.reconcile`; its traceback (at most 40 lines, 4 KiB) follows the message after a
  newline, for the host's event and the component's log.
- `validate` refuses by raising any exception; its message is what the user sees.
- Logging: `log.info("...")` and friends write to the host's log under the component name.

The module imports the generated bindings (`wit_world`) that componentize-py provides at
build time; build with `-p sdk/python` so that it is found:

    componentize-py -d wit -w controller componentize app -p . -p sdk/python -o app.wasm

In a plain Python process (unit tests) it uses the stand-ins of `reactor_sdk_wit` instead,
whose host calls a `reactor_sdk_testing.FakeHost` answers.
"""

import json
import traceback
from typing import Any, Dict, List, Optional, Sequence, Tuple

try:
    from componentize_py_types import Err
except ImportError:  # a plain Python process (unit tests): stand-ins answered by a fake host
    import reactor_sdk_wit as _standin
    from reactor_sdk_wit import Err
else:
    _standin = None

if _standin is not None:  # see reactor_sdk_testing.FakeHost
    _config, _log = _standin.config, _standin.log
    _ReactorProtocol = object
    _reactor, _nimbus, _store, _types = _standin.reactor, _standin.nimbus, _standin.store, _standin.types
    _DescriptorProtocol, _kv = object, None
else:
    try:  # both worlds
        from wit_world.imports import config as _config
        from wit_world.imports import log as _log
    except ImportError:  # pragma: no cover - outside a component build
        _config = None
        _log = None

    try:  # world `controller`
        from wit_world.exports import Reactor as _ReactorProtocol
        from wit_world.exports import reactor as _reactor
        from wit_world.imports import nimbus as _nimbus
        from wit_world.imports import store as _store
        from wit_world.imports import types as _types
    except ImportError:
        _ReactorProtocol = object
        _reactor = _nimbus = _store = _types = None

    try:  # world `descriptor`
        from wit_world.exports import KvDescriptor as _DescriptorProtocol
        from wit_world.exports import kv_descriptor as _kv
    except ImportError:
        _DescriptorProtocol = object
        _kv = None


# ---------------------------------------------------------------------------- errors


class Retry(Exception):
    """A transient failure: the host retries with backoff."""


class Permanent(Exception):
    """A failure retrying cannot fix: shown in status, not retried until the object changes."""


def _describe_error(value: Any) -> str:
    """The message of a WIT error variant (`StoreError_Conflict("...")` etc.)."""
    kind = type(value).__name__.split("_", 1)[-1]
    detail = getattr(value, "value", None)
    return f"{kind}: {detail}" if detail is not None else kind


def _to_wit_error(error: BaseException):
    """Maps an exception raised by a callback to the WIT `error` variant."""
    if isinstance(error, Err):
        value = error.value
        if _types is not None and isinstance(value, (_types.Error_Retry, _types.Error_Permanent)):
            return value
        name = type(value).__name__
        message = _describe_error(value)
        if name.startswith("StoreError"):
            retry = name in ("StoreError_Unavailable", "StoreError_Conflict")
            message = f"store {message}"
        elif name.startswith("NimbusError"):
            retry = name == "NimbusError_Unavailable"
            message = f"nimbus {message}"
        else:
            retry = True
        return _types.Error_Retry(message) if retry else _types.Error_Permanent(message)
    if isinstance(error, Permanent):
        return _types.Error_Permanent(str(error))
    if isinstance(error, json.JSONDecodeError):
        return _types.Error_Permanent(f"invalid JSON: {error}")
    if isinstance(error, Retry):
        return _types.Error_Retry(str(error))
    line = " ".join(f"{type(error).__name__}: {error}".split("\n"))
    return _types.Error_Retry(f"{line}\n{_traceback(error)}")


TRACEBACK_LINES = 40
"""Lines of an unexpected exception's traceback sent at most (the host's limit is 8 KiB)."""
TRACEBACK_BYTES = 4096
"""Bytes of an unexpected exception's traceback sent at most."""


def _traceback(error: BaseException) -> str:
    """The traceback of `error` from the callback down (the SDK's own frame left out), at
    most `TRACEBACK_LINES` lines and `TRACEBACK_BYTES` bytes: its first three lines (the
    callback's frame) and its last lines (where it failed), with a line saying how many
    were cut between."""
    frames = error.__traceback__.tb_next if error.__traceback__ is not None else None
    text = "".join(traceback.format_exception(type(error), error, frames)).rstrip("\n")
    return _bounded(text.split("\n"))


def _bounded(lines: List[str]) -> str:
    size = sum(len(line.encode()) + 1 for line in lines)
    if len(lines) <= TRACEBACK_LINES and size <= TRACEBACK_BYTES:
        return "\n".join(lines)
    head, tail = [line[:200] for line in lines[:3]], []
    room = TRACEBACK_BYTES - sum(len(line.encode()) + 1 for line in head) - 64  # the marker
    for line in reversed(lines[len(head):]):
        if len(head) + 1 + len(tail) >= TRACEBACK_LINES or len(line.encode()) + 1 > room:
            break
        tail.insert(0, line)
        room -= len(line.encode()) + 1
    if not tail:  # one huge last line: its start
        last = lines[-1].encode()[: max(room - 8, 0)].decode(errors="ignore")
        tail = [f"{last} [cut]"]
    cut = len(lines) - len(head) - len(tail)
    return "\n".join([*head, f"  ... {cut} lines cut by the SDK ...", *tail])


# ---------------------------------------------------------------------------- JSON helpers


def spec(obj) -> Dict[str, Any]:
    """The object's spec as a dict (`{}` for an empty spec)."""
    value = json.loads(obj.spec) if obj.spec else {}
    if not isinstance(value, dict):
        raise Permanent("spec is not a JSON object")
    return value


def status(obj) -> Dict[str, Any]:
    """The object's status as a dict (`{}` when there is none or it is not an object)."""
    if not obj.status:
        return {}
    try:
        value = json.loads(obj.status)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def labels(obj) -> Dict[str, str]:
    """The object's labels as a dict."""
    return dict(obj.labels)


def config() -> Optional[Any]:
    """This component's config from the host's config file, parsed; `None` without one."""
    text = _config.get()
    return None if text is None else json.loads(text)


# ---------------------------------------------------------------------------- store, nimbus


def set_status(value: Dict[str, Any]) -> None:
    """Replaces the status of the callback's primary object."""
    _store.set_status(json.dumps(value))


def get(kind: str, name: str):
    """One object of the store, or `None`."""
    return _store.get(kind, name)


def list_objects(kind: str, selector: Optional[Dict[str, str]] = None) -> list:
    """The objects of `kind` whose labels include `selector`."""
    return _store.list(kind, list((selector or {}).items()))


def apply(kind: str, name: str, spec_value: Any, labels_value: Optional[Dict[str, str]] = None):
    """Creates or updates a child object owned by the primary object."""
    obj = _types.Object(
        kind=kind,
        name=name,
        labels=list((labels_value or {}).items()),
        spec=json.dumps(spec_value),
        status=None,
        meta=None,
    )
    return _store.apply(obj)


def delete(kind: str, name: str) -> bool:
    """Deletes a child object of the primary object; `False` when it did not exist."""
    return _store.delete(kind, name)


def owner(obj):
    """The object that owns `obj` (kind, name, uid, component), or `None`."""
    return obj.meta.owner if obj.meta is not None else None


def publish(
    key: str,
    value: Any,
    selector: Optional[Dict[str, str]] = None,
    agents: Optional[List[str]] = None,
) -> None:
    """Publishes `value` (any JSON) as Nimbus item `key`, to `agents` by id if given, else
    to the agents whose labels include `selector` (every agent when empty)."""
    if agents is not None:
        to = _nimbus.Target_Agents(list(agents))
    else:
        to = _nimbus.Target_Labels(list((selector or {}).items()))
    _nimbus.publish(key, json.dumps(value), to)


def unpublish(key: str) -> None:
    """Withdraws a Nimbus item (a missing one is fine)."""
    _nimbus.unpublish(key)


def published(prefix: str) -> List[str]:
    """Keys this object has published under `prefix`."""
    return _nimbus.published(prefix)


def statuses(prefix: str) -> list:
    """Agents' latest reports on this object's items under `prefix`."""
    return _nimbus.statuses(prefix)


def agent_statuses(prefix: str, agent: str) -> list:
    """`agent`'s latest reports on this object's items under `prefix`: `statuses` of one
    agent, at the cost of that agent's reports alone (reactor:host@0.2.1)."""
    return _nimbus.agent_statuses(prefix, agent)


def applied(report) -> bool:
    """Whether an item status says the agent applied the item."""
    return report.state == _types.ItemState.APPLIED


def state(report) -> str:
    """An item status's state by its WIT name: "applied", "pending" (the agent has the item
    and waits, e.g. for a dependency; `report.message` says for what), "failed" (the agent
    could not apply it; `report.message` is the error) or "removed" (the item left the
    agent)."""
    return report.state.name.lower()


# ---------------------------------------------------------------------------- conditions


def now() -> str:
    """The wall clock now (the host's, or the one `reactor-host test` fixes), RFC 3339 to
    the second."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def set_condition(
    status_value: Dict[str, Any],
    previous: Optional[Dict[str, Any]],
    type: str,
    condition_status: str,
    reason: str = "",
    message: str = "",
    observed_generation: Optional[int] = None,
    at: Optional[str] = None,
) -> Dict[str, Any]:
    """Sets the condition `type` (status "True", "False" or "Unknown") in `status_value`
    (the status about to be written), among the conditions of `previous` (the object's
    status as read: `status(obj)`), as Kubernetes keeps `status.conditions`: its
    `lastTransitionTime` moves (to `at`, else now) only when its status changes. Returns
    `status_value`."""
    source = status_value.get("conditions")
    if source is None and previous:
        source = previous.get("conditions")
    conditions = [dict(c) for c in (source or []) if isinstance(c, dict)]
    old = next((c for c in conditions if c.get("type") == type), None)
    since = (old or {}).get("lastTransitionTime") if (old or {}).get("status") == condition_status else None
    entry = {
        "type": type,
        "status": condition_status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since or at or now(),
    }
    if observed_generation is not None:
        entry["observedGeneration"] = observed_generation
    if old is None:
        conditions.append(entry)
    else:
        conditions[conditions.index(old)] = entry
    status_value["conditions"] = conditions
    return status_value


def find_condition(status_value: Dict[str, Any], type: str) -> Optional[Dict[str, Any]]:
    """The condition `type` of `status_value`, or None."""
    return next((c for c in status_value.get("conditions") or [] if c.get("type") == type), None)


def is_condition_true(status_value: Dict[str, Any], type: str) -> bool:
    """Whether `status_value` has the condition `type` with status "True"."""
    return (find_condition(status_value, type) or {}).get("status") == "True"


# ---------------------------------------------------------------------------- log


class log:
    """Logging to the host's log, under the component's name."""

    @staticmethod
    def _write(level: str, message: str) -> None:
        _log.log(getattr(_log.Level, level), str(message))

    @staticmethod
    def trace(message: str) -> None:
        log._write("TRACE", message)

    @staticmethod
    def debug(message: str) -> None:
        log._write("DEBUG", message)

    @staticmethod
    def info(message: str) -> None:
        log._write("INFO", message)

    @staticmethod
    def warn(message: str) -> None:
        log._write("WARN", message)

    @staticmethod
    def error(message: str) -> None:
        log._write("ERROR", message)


# ---------------------------------------------------------------------------- controller


def requeue_after(ms: int):
    """Returned by a callback: run the object again after `ms` milliseconds."""
    return _types.Action_RequeueAfter(int(ms))


def describe(
    name: str,
    kinds: List[str],
    resync_ms: int = 0,
    handles_delete: bool = False,
    owns: Sequence[str] = (),
    references: Sequence[Tuple[str, str]] = (),
    selects: Sequence[Tuple[str, str]] = (),
):
    """What `Reactor.describe` returns.

    Other kinds watched: `owns` lists kinds of children the reactor applies (a change by
    anyone else runs the owner again; they are deleted when the owner goes); `references`
    lists `(kind, path)` pairs, e.g. `("Plan", "spec.plan")`: a change to the named object
    runs every object naming it again; `selects` lists `(kind, path)` pairs whose field is a
    label selector over the reactor's objects. An object's owner, if a reactor applied it, is
    `obj.meta.owner` (kind, name, uid, component)."""
    watches = (
        [_reactor.Watch_Owns(str(kind)) for kind in owns]
        + [_reactor.Watch_References(_reactor.Reference(kind=k, path=p)) for k, p in references]
        + [_reactor.Watch_Selects(_reactor.Selection(kind=k, path=p)) for k, p in selects]
    )
    return _reactor.Info(
        name=name,
        kinds=list(kinds),
        resync_period_ms=int(resync_ms),
        handles_delete=handles_delete,
        watches=watches,
    )


def _callback(function):
    def wrapper(self, *args):
        try:
            action = function(self, *args)
        except BaseException as error:  # noqa: BLE001 - every failure becomes a WIT error
            raise Err(_to_wit_error(error))
        if action is None:
            return _types.Action_Done()
        return action

    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    wrapper._reactor_sdk = True
    return wrapper


def _validator(function):
    def wrapper(self, *args):
        try:
            function(self, *args)
        except Err:
            raise
        except BaseException as error:  # noqa: BLE001 - the message is the refusal
            raise Err(str(error))

    wrapper.__name__ = function.__name__
    wrapper._reactor_sdk = True
    return wrapper


class Reactor(_ReactorProtocol):
    """Base class of a controller. Override `describe` and the callbacks you need:
    `validate` accepts, `on_update(old, new)` calls `on_create(new)`, the others do nothing."""

    _callbacks = ("on_create", "on_update", "on_delete", "on_agent_status")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls._callbacks:
            function = cls.__dict__.get(name)
            if function is not None and not getattr(function, "_reactor_sdk", False):
                setattr(cls, name, _callback(function))
        function = cls.__dict__.get("validate")
        if function is not None and not getattr(function, "_reactor_sdk", False):
            cls.validate = _validator(function)

    def describe(self):
        raise NotImplementedError("a reactor must override describe()")

    def validate(self, obj) -> None:
        return None

    @_callback
    def on_create(self, obj):
        return None

    @_callback
    def on_update(self, old, new):
        return self.on_create(new)

    @_callback
    def on_delete(self, obj):
        return None

    @_callback
    def on_agent_status(self, owner, report):
        return None


# ---------------------------------------------------------------------------- descriptor


def descriptor_info(name: str, key_prefix: str, retrieve_dependencies: Optional[List[str]] = None):
    """What `Descriptor.describe` returns."""
    return _kv.Info(
        name=name, key_prefix=key_prefix, retrieve_dependencies=list(retrieve_dependencies or [])
    )


def retrieved(key: str, value: str, metadata: Optional[str] = None, from_southbound: bool = False):
    """One value found by `Descriptor.retrieve`."""
    origin = _kv.Origin.FROM_SOUTHBOUND if from_southbound else _kv.Origin.FROM_NORTHBOUND
    return _kv.Retrieved(key=key, value=value, metadata=metadata, origin=origin)


def depends_on_key(label: str, key: str):
    """A dependency on one key."""
    return _kv.Dependency(label=label, target=_kv.DependencyTarget_Key(key))


def depends_on_any(label: str, prefix: str):
    """A dependency on any key under `prefix`."""
    return _kv.Dependency(label=label, target=_kv.DependencyTarget_AnyOf(prefix))


def _string_errors(function):
    def wrapper(self, *args):
        try:
            return function(self, *args)
        except Err:
            raise
        except BaseException as error:  # noqa: BLE001 - descriptors fail with a string
            raise Err(f"{type(error).__name__}: {error}" if not isinstance(error, (Retry, Permanent)) else str(error))

    wrapper.__name__ = function.__name__
    wrapper._reactor_sdk = True
    return wrapper


class Descriptor(_DescriptorProtocol):
    """Base class of a descriptor (export it as `KvDescriptor`). Override `describe`,
    `create`, `delete` and usually `retrieve`; exceptions from `validate`, `create`,
    `update`, `delete` and `retrieve` become their error strings."""

    _fallible = ("validate", "create", "update", "delete", "retrieve")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls._fallible:
            function = cls.__dict__.get(name)
            if function is not None and not getattr(function, "_reactor_sdk", False):
                setattr(cls, name, _string_errors(function))

    def describe(self):
        raise NotImplementedError("a descriptor must override describe()")

    def validate(self, key: str, value: str) -> None:
        return None

    def create(self, key: str, value: str) -> Optional[str]:
        return None

    def update(self, key: str, old_value: str, new_value: str, metadata: Optional[str]) -> Optional[str]:
        return self.create(key, new_value)

    def update_with_recreate(self, key, old_value, new_value, metadata) -> bool:
        return False

    def delete(self, key: str, value: str, metadata: Optional[str]) -> None:
        return None

    def retrieve(self, correlate) -> list:
        """Default: trusts the scheduler (no drift detection)."""
        return [retrieved(kv.key, kv.value) for kv in correlate]

    def dependencies(self, key: str, value: str) -> list:
        return []

    def derived_values(self, key: str, value: str) -> list:
        return []

    def is_retriable(self, error: str) -> bool:
        return True
