"""Reusable node-local results by key: node tables and per-position columns, with their bounds."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar, final

from kschedlib._internal.plugin_errors import FilterRunner
from kschedlib._internal.reuse.columns import FilterColumn, ScoreColumn
from kschedlib.framework._bounded import BoundedLRU
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["Memo", "MemoizedFilter", "memo_key"]

_ERROR: Final = Code.ERROR
_WITH_NOMINATED: Final = "with nominated pods"
_C = TypeVar("_C", FilterColumn, ScoreColumn)


def memo_key(key_of: Callable[[CycleState, Pod], object], state: CycleState, pod: Pod) -> object:
    """A node-local plugin's memo key, or ``None`` when its results cannot be reused.

    A key that raises or cannot be hashed means no reuse: the plugin then runs on every node.
    """
    try:
        key = key_of(state, pod)
        hash(key)
    except Exception:
        return None
    return key


@final
class Memo:
    """Reusable node-local results by key: node tables and per-position columns.

    A node table maps a node's name -> (NodeInfo, value); an entry is valid only while its NodeInfo
    object is the one being asked about.  Keyed by name (not by NodeInfo id), a node's newer NodeInfo
    replaces the entry of its older one, so a table holds one entry per node and no NodeInfo a node
    has left behind.  A column (see :mod:`~kschedlib._internal.reuse.columns`)
    covers every position of the snapshot; it is only built for a key once its pods have asked
    about as many nodes as the snapshot has, so one-off pod shapes never pay for it.
    Keys are few (one per distinct pod shape); tables, columns and use counts keep the most
    recently used keys (:class:`~kschedlib.framework._bounded.BoundedLRU`).  A table itself is
    emptied whole beyond :attr:`MAX_ENTRIES` (names of nodes gone from the snapshot): the node
    search reads it as a plain dict, per node, with no room for recency bookkeeping.
    """

    __slots__ = ("_tables", "_uses")
    MAX_TABLES: Final = 64
    MAX_ENTRIES: Final = 50_000
    MAX_COUNTED: Final = 4_096

    def __init__(self) -> None:
        self._tables: BoundedLRU[object, Any] = BoundedLRU(self.MAX_TABLES)
        self._uses: BoundedLRU[object, int] = BoundedLRU(self.MAX_COUNTED)

    def table(self, key: object) -> dict[Hashable, Any]:
        table: dict[Hashable, Any] | None = self._tables.get(key)
        if table is None:
            table = {}
            self._tables.put(key, table)
        elif len(table) > self.MAX_ENTRIES:
            table.clear()
        return table

    def column(self, key: object, factory: Callable[[], _C], nodes: int, wanted: int) -> _C | None:
        """The column of ``key``, or ``None`` while its uses have not yet covered ``nodes`` nodes."""
        column: _C | None = self._tables.get(key)
        if column is not None:
            return column
        uses = (self._uses.get(key) or 0) + max(wanted, 1)
        if uses < nodes:
            self._uses.put(key, uses)
            return None
        self._uses.pop(key)
        column = factory()
        self._tables.put(key, column)
        return column


@final
class MemoizedFilter:
    """A filter runner that reuses verdicts per NodeInfo; the node search reads ``table`` directly.

    The table is keyed by node name and holds the node's current NodeInfo with its verdict, so it keeps
    no NodeInfo a node has left behind; a NodeInfo composed with the node's nominated pods has its own
    key (:meth:`with_nominated`), so that the two verdicts of the two-pass rule do not displace each other.
    """

    __slots__ = ("run", "table")

    def __init__(self, run: FilterRunner, table: dict[Hashable, Any]) -> None:
        self.run = run
        self.table = table

    def __call__(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        entry = self.table.get(node_info.name)
        if entry is not None and entry[0] is node_info:
            cached: Status = entry[1]
            return cached
        status = self.run(state, pod, node_info)
        if status.code is not _ERROR:
            self.table[node_info.name] = (node_info, status)
        return status

    def with_nominated(self, state: CycleState, pod: Pod, composed: NodeInfo) -> Status:
        """The verdict on ``composed``, a node's NodeInfo with its nominated pods added."""
        key = (_WITH_NOMINATED, composed.name)
        entry = self.table.get(key)
        if entry is not None and entry[0] is composed:
            cached: Status = entry[1]
            return cached
        status = self.run(state, pod, composed)
        if status.code is not _ERROR:
            self.table[key] = (composed, status)
        return status


