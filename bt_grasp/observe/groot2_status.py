"""Our ticks as BT.CPP's status transitions: what Groot2 replays (.btlog) and monitors (STATUS).

A trace records each tick's final status per ticked node. BT.CPP's loggers instead see every
`setStatus` change: a control or decorator turns RUNNING before it ticks its children, and nodes
go back to IDLE as BT.CPP resets them: a control or decorator that finishes resets (halts) its
children before it returns, a decorator that restarts its child (RetryUntilSuccessful, Repeat)
resets that child, a RUNNING node that its parent stops ticking is halted, and the root is reset
once the tree has finished. Groot2 draws a node by its latest transition, so without those IDLEs
a finished branch would stay lit for the rest of the replay. `StatusFold` puts them back, in
BT.CPP's order, and emits a transition only where the status changes (tests/test_groot2_btlog.py
compares it with BT.CPP's own FileLogger2 where its Python binding is installed).
"""

from __future__ import annotations

from collections.abc import Iterable

from bt_grasp.observe.groot2_xml import Groot2Tree

IDLE, RUNNING, SUCCESS, FAILURE, SKIPPED = 0, 1, 2, 3, 4
# trace status -> BT.CPP NodeStatus; py_trees' INVALID is a node never ticked or reset: IDLE
CODE = {"IDLE": IDLE, "INVALID": IDLE, "RUNNING": RUNNING, "SUCCESS": SUCCESS, "FAILURE": FAILURE,
        "SKIPPED": SKIPPED}

Transition = tuple[int, int, int]  # (uid, new status, previous status)


class StatusFold:
    """Current BT.CPP status of every node of a Groot2Tree, advanced one trace tick at a time."""

    def __init__(self, tree: Groot2Tree) -> None:
        self.tree = tree
        self.status: dict[int, int] = {uid: IDLE for uid in range(1, tree.count + 1)}
        self.children: dict[str, list[str]] = {nid: [] for nid in tree.uids}
        self.root: str | None = None
        for nid, parent in tree.parent.items():
            if parent is None:
                self.root = nid
            else:
                self.children[parent].append(nid)

    def _set(self, nid: str, code: int, out: list[Transition]) -> None:
        uid = self.tree.uids[nid]
        prev = self.status[uid]
        if prev != code:
            self.status[uid] = code
            out.append((uid, code, prev))

    def _reset_below(self, nid: str, out: list[Transition]) -> None:
        """Descendants of `nid` back to IDLE, deepest first (as BT.CPP's haltChildren does)."""
        for child in self.children[nid]:
            self._reset(child, out)

    def _reset(self, nid: str, out: list[Transition]) -> None:
        self._reset_below(nid, out)
        self._set(nid, IDLE, out)

    def tick(self, visited: Iterable[tuple[str, str] | list[str]]) -> list[Transition]:
        """The transitions one tick made, from its `visited` [(node id, status)], in the order
        BT.CPP makes them: depth-first, a control or decorator RUNNING before it ticks its
        children, each node's own status after theirs. Nodes outside the tree (a subtree view)
        are skipped."""
        uids = self.tree.uids
        final = {nid: CODE.get(text, IDLE) for nid, text in visited if nid in uids}
        out: list[Transition] = []
        for nid in final:  # where the tick entered this tree: the root, or a subtree's top
            if self.tree.parent.get(nid) not in final:
                self._visit(nid, final, out)
        for nid, uid in uids.items():  # running, but no longer ticked: halted by an ancestor
            if self.status[uid] == RUNNING and nid not in final:
                self._reset(nid, out)
        if self.root is not None and self.status[uids[self.root]] in (SUCCESS, FAILURE):
            self._reset(self.root, out)  # the tree has finished: BT.CPP resets its root
        return out

    def _visit(self, nid: str, final: dict[str, int], out: list[Transition]) -> None:
        children = self.children[nid]
        if children:
            self._set(nid, RUNNING, out)  # BT.CPP's controls and decorators: RUNNING, then tick
        for child in children:
            if child in final:
                self._visit(child, final, out)
        code = final[nid]
        if code in (SUCCESS, FAILURE):
            self._reset_below(nid, out)  # a finished node has halted its children
        elif code == RUNNING and nid in self.tree.single_child:
            for child in children:  # a decorator that restarts a finished child
                if self.status[self.tree.uids[child]] in (SUCCESS, FAILURE):
                    self._reset(child, out)
        self._set(nid, code, out)

    def buffer(self, idle_marks: dict[int, int] | None = None) -> bytes:
        """The STATUS reply: u16 uid + u8 status per node in UID order; a node reset to IDLE is
        sent as 10 + the status it had (`idle_marks`), as BT.CPP's Groot2Publisher does."""
        marks = idle_marks or {}
        out = bytearray()
        for uid in range(1, self.tree.count + 1):
            code = self.status[uid]
            if code == IDLE and uid in marks:
                code = 10 + marks[uid]
            out += uid.to_bytes(2, "little") + bytes((code,))
        return bytes(out)
