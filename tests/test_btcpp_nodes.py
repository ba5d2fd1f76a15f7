"""BT.CPP / Nav2 node semantics (interop.nodes), ticked by hand against scripted outcomes.

The point of these types is that they refill: a RetryUntilSuccessful or RecoveryNode that is
halted and re-entered starts with a full budget again, unlike bt_grasp's `retry`.
"""

from __future__ import annotations

from dataclasses import replace

from helpers import Harness, tree_spec
from py_trees.common import Status

from bt_grasp.interop.common import interop_registry
from bt_grasp.oracles import ScriptedOracle

ASYNC = "[success, failure, running]"


def _leaf(node_id: str, kind: str = "opaque_action", outcomes: str = ASYNC) -> str:
    return f"{kind}: {{id: {node_id}, btcpp_id: {node_id}, outcomes: {outcomes}}}"


def _calls(h: Harness, btcpp_id: str) -> int:
    return h.ctx.ledger.primitive_calls.get(f"btcpp.{btcpp_id}", 0)


def _preempted(decorator: str) -> Harness:
    spec = tree_spec(f"""
        tree: t
        root:
          sequence:
            memory: false
            children:
              - {_leaf("C", "opaque_condition", "[success, failure]")}
              - {decorator}:
                  id: guard
                  {"num_attempts" if decorator == "btcpp_retry" else "attempts"}: 2
                  child: {{{_leaf("A")}}}
    """)
    oracle = ScriptedOracle({"C": ["success", "failure", "success"], "A": ["failure", "failure"]})
    return Harness(spec, oracle)


def test_btcpp_retry_is_refilled_when_preempted():
    h = _preempted("btcpp_retry")
    assert h.tick() == Status.RUNNING          # A failed once: 1 of 2 attempts used
    assert h.node("guard").try_count == 1
    assert h.tick() == Status.FAILURE          # C fails: the reactive sequence halts the retry
    assert h.node("guard").try_count == 0      # ... which refills it (BT.CPP halt())
    assert h.tick() == Status.RUNNING          # A fails again, yet a second attempt remains


def test_bt_grasp_retry_is_not_refilled_when_preempted():
    h = _preempted("retry")
    assert h.tick() == Status.RUNNING
    assert h.tick() == Status.FAILURE
    assert h.tick() == Status.FAILURE          # the second start was the last one: spent


def test_recovery_node_refills_on_halt():
    spec = tree_spec(f"""
        tree: t
        root:
          sequence:
            memory: false
            children:
              - {_leaf("C", "opaque_condition", "[success, failure]")}
              - recovery_node:
                  id: rec
                  number_of_retries: 1
                  children:
                    - {_leaf("A")}
                    - {_leaf("B")}
    """)
    oracle = ScriptedOracle({"C": ["success", "failure", "success"],
                             "A": ["failure", "running", "failure", "failure"],
                             "B": ["success", "success"]})
    h = Harness(spec, oracle)
    assert h.tick() == Status.RUNNING                  # A fails, B recovers, A runs again
    assert (h.node("rec").retry_count, h.node("rec").index) == (1, 0)  # the one retry is used
    assert h.tick() == Status.FAILURE                  # preempted by C
    assert (h.node("rec").retry_count, h.node("rec").index) == (0, 0)  # refilled
    assert h.tick() == Status.FAILURE                  # A fails, B recovers AGAIN, A fails
    assert _calls(h, "B") == 2


def test_recovery_node_failure_paths():
    spec = tree_spec(f"""
        tree: t
        root:
          recovery_node:
            id: rec
            number_of_retries: 2
            children:
              - {_leaf("A")}
              - {_leaf("B")}
    """)
    h = Harness(spec, ScriptedOracle({"A": ["failure", "failure"], "B": ["success", "failure"]}))
    assert h.tick() == Status.FAILURE   # the recovery itself failed
    assert (_calls(h, "A"), _calls(h, "B")) == (2, 2)
    h = Harness(spec, ScriptedOracle({"A": ["failure"] * 3, "B": ["success"] * 3}))
    assert h.tick() == Status.FAILURE   # retries exhausted: 2 recoveries, 3 attempts
    assert (_calls(h, "A"), _calls(h, "B")) == (3, 2)


def test_pipeline_sequence_reticks_earlier_children():
    spec = tree_spec(f"""
        tree: t
        root:
          pipeline_sequence:
            id: pipe
            children:
              - {_leaf("Plan")}
              - {_leaf("Follow")}
    """)
    h = Harness(spec, ScriptedOracle({"Plan": ["success"] * 3,
                                      "Follow": ["running", "running", "success"]}))
    assert [h.tick() for _ in range(3)] == [Status.RUNNING, Status.RUNNING, Status.SUCCESS]
    assert _calls(h, "Plan") == 3   # replanned on every tick while Follow ran
    h = Harness(spec, ScriptedOracle({"Plan": ["success", "failure"], "Follow": ["running"]}))
    assert [h.tick(), h.tick()] == [Status.RUNNING, Status.FAILURE]
    assert h.node("Follow").status == Status.INVALID  # halted


def test_round_robin_resumes_after_the_last_child():
    spec = tree_spec(f"""
        tree: t
        root:
          round_robin:
            id: rr
            children:
              - {_leaf("A")}
              - {_leaf("B")}
              - {_leaf("C")}
    """)
    h = Harness(spec, ScriptedOracle({"A": ["success", "failure"], "B": ["failure", "failure"],
                                      "C": ["success", "failure"]}))
    assert h.tick() == Status.SUCCESS   # A
    assert h.tick() == Status.SUCCESS   # B fails, C succeeds: next activation starts at A
    assert (h.node("rr").index, h.node("rr").failed) == (0, 0)
    assert h.tick() == Status.FAILURE   # A, B, C all fail in a row
    assert (_calls(h, "A"), _calls(h, "B"), _calls(h, "C")) == (2, 2, 2)


def test_threshold_parallel():
    spec = tree_spec(f"""
        tree: t
        root:
          btcpp_parallel:
            success_count: 2
            failure_count: 2
            children:
              - {_leaf("A")}
              - {_leaf("B")}
              - {_leaf("C")}
    """)
    h = Harness(spec, ScriptedOracle({"A": ["success"], "B": ["failure"], "C": ["running", "success"]}))
    assert [h.tick(), h.tick()] == [Status.RUNNING, Status.SUCCESS]
    assert _calls(h, "A") == 1  # finished children are not ticked again
    h = Harness(spec, ScriptedOracle({"A": ["failure"], "B": ["failure"], "C": ["running"]}))
    assert h.tick() == Status.FAILURE


def test_opaque_leaf_without_oracle_uses_a_handler_or_fails_saying_why():
    spec = tree_spec(f"""
        tree: t
        root:
          sequence:
            children:
              - {_leaf("Spin")}
    """)
    h = Harness(spec, None)
    assert h.tick() == Status.FAILURE
    assert "no implementation for BT.CPP node Spin" in h.ctx.blackboard.get("Spin.error")
    h = Harness(spec, None)
    h.ctx.services = replace(h.ctx.services, btcpp={"Spin": lambda ports: "success"})
    assert h.tick() == Status.SUCCESS


def test_static_counts_per_activation():
    from bt_grasp.interop.nodes import may_run, static_counts

    spec = tree_spec(f"""
        tree: t
        root:
          pipeline_sequence:
            id: pipe
            children:
              - recovery_node:
                  id: rec
                  number_of_retries: 2
                  children:
                    - {_leaf("A", outcomes="[success, failure]")}
                    - {_leaf("B", outcomes="[success, failure]")}
              - btcpp_retry:
                  id: r
                  num_attempts: 3
                  child: {{{_leaf("C")}}}
    """)
    reg = interop_registry()
    pipe = spec.root
    rec, retry = pipe.children
    assert static_counts(rec, [{"a": 1}, {"b": 1}], reg) == {"a": 3, "b": 2}
    assert static_counts(retry, [{"c": 1}], reg) == {"c": 3}
    assert may_run(retry, reg) and not may_run(rec, reg)
    # the recovery is re-ticked while the retry runs: no static bound
    assert static_counts(pipe, [{"a": 3}, {"c": 3}], reg) == {"a": None, "c": 3}
    assert static_counts(spec.root.children[0].children[0], [], reg) is None
