"""Stand-ins for the WIT bindings componentize-py generates, for running `reactor_sdk` in a
plain Python process (unit tests): the same classes and functions, where each host call is
answered by the fake host installed on the calling thread (`reactor_sdk_testing.FakeHost`).

Inside a component this module is never imported: `reactor_sdk` uses the generated
bindings (`wit_world`) when `componentize_py_types` exists.
"""

import threading
from dataclasses import dataclass
from enum import Enum
from types import SimpleNamespace as _Namespace
from typing import Any, List, Optional, Tuple


@dataclass(frozen=True)
class Err(Exception):
    """The failure case of a WIT `result`, raised by a failed host call (as componentize-py's)."""

    value: Any


# ---------------------------------------------------------------------------- types


@dataclass
class Owner:
    kind: str
    name: str
    uid: str
    component: str


@dataclass
class Meta:
    uid: str
    revision: int
    generation: int
    created: str
    updated: str
    finalizers: List[str]
    deleting: bool
    owner: Optional[Owner]


@dataclass
class Object:
    kind: str
    name: str
    labels: List[Tuple[str, str]]
    spec: str
    status: Optional[str]
    meta: Optional[Meta]


@dataclass
class Action_Done:
    pass


@dataclass
class Action_RequeueAfter:
    value: int


@dataclass
class Error_Retry:
    value: str


@dataclass
class Error_Permanent:
    value: str


class ItemState(Enum):
    PENDING = 0
    APPLIED = 1
    FAILED = 2
    REMOVED = 3


@dataclass
class ItemStatus:
    key: str
    agent: str
    state: ItemState
    message: Optional[str]
    revision: int


# ---------------------------------------------------------------------------- store, nimbus errors


@dataclass
class StoreError_NotFound:
    pass


@dataclass
class StoreError_Conflict:
    value: str


@dataclass
class StoreError_Invalid:
    value: str


@dataclass
class StoreError_Denied:
    value: str


@dataclass
class StoreError_Unavailable:
    value: str


@dataclass
class Target_Agents:
    value: List[str]


@dataclass
class Target_Labels:
    value: List[Tuple[str, str]]


@dataclass
class NimbusError_Invalid:
    value: str


@dataclass
class NimbusError_Denied:
    value: str


@dataclass
class NimbusError_Unavailable:
    value: str


class Level(Enum):
    TRACE = 0
    DEBUG = 1
    INFO = 2
    WARN = 3
    ERROR = 4


# ---------------------------------------------------------------------------- reactor export


@dataclass
class Reference:
    kind: str
    path: str


@dataclass
class Selection:
    kind: str
    path: str


@dataclass
class Watch_Owns:
    value: str


@dataclass
class Watch_References:
    value: Reference


@dataclass
class Watch_Selects:
    value: Selection


@dataclass
class Info:
    name: str
    kinds: List[str]
    resync_period_ms: int
    handles_delete: bool
    watches: list


# ---------------------------------------------------------------------------- the host on this thread

_current = threading.local()


def install(host) -> Any:
    """Makes `host` answer this thread's host calls; returns the one it replaces."""
    previous = getattr(_current, "host", None)
    _current.host = host
    return previous


def _host(call: str):
    host = getattr(_current, "host", None)
    if host is None:
        raise RuntimeError(
            f"reactor_sdk: {call} called with no host: outside a component, run the callback "
            "through reactor_sdk_testing.FakeHost (e.g. host.on_create(Reactor(), obj))"
        )
    return host


def _call(interface: str, name: str):
    def call(*args):
        return getattr(_host(f"{interface}.{name}"), f"_{interface}_{name}")(*args)

    call.__name__ = name
    return call


def _log(level: Level, message: str) -> None:
    host = getattr(_current, "host", None)
    if host is None:  # a helper called directly in a test: show the line
        print(f"[{level.name}] {message}")
    else:
        host._log_log(level, message)


# The interfaces, as `wit_world.imports.<name>` and `wit_world.exports.reactor` name them.
types = _Namespace(
    Owner=Owner, Meta=Meta, Object=Object, Action_Done=Action_Done,
    Action_RequeueAfter=Action_RequeueAfter, Error_Retry=Error_Retry,
    Error_Permanent=Error_Permanent, ItemState=ItemState, ItemStatus=ItemStatus,
)
store = _Namespace(
    StoreError_NotFound=StoreError_NotFound, StoreError_Conflict=StoreError_Conflict,
    StoreError_Invalid=StoreError_Invalid, StoreError_Denied=StoreError_Denied,
    StoreError_Unavailable=StoreError_Unavailable,
    **{name: _call("store", name) for name in ("get", "list", "apply", "delete", "set_status")},
)
nimbus = _Namespace(
    Target_Agents=Target_Agents, Target_Labels=Target_Labels,
    NimbusError_Invalid=NimbusError_Invalid, NimbusError_Denied=NimbusError_Denied,
    NimbusError_Unavailable=NimbusError_Unavailable,
    **{name: _call("nimbus", name)
       for name in ("publish", "unpublish", "published", "statuses", "agent_statuses")},
)
log = _Namespace(Level=Level, log=_log)
config = _Namespace(get=_call("config", "get"), revision=_call("config", "revision"))
reactor = _Namespace(
    Info=Info, Reference=Reference, Selection=Selection, Watch_Owns=Watch_Owns,
    Watch_References=Watch_References, Watch_Selects=Watch_Selects,
)
