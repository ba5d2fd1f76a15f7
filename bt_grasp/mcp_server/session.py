"""ToolSession: one persistent bt_grasp episode driven one tool call at a time (no MCP here).

Why a session and not one episode per call: the episode budgets (`actions`, `perception_streak`,
`max_ticks`) only mean something if they are counted across the planner's calls. So the session
owns the episode's long-lived state — ledger, blackboard, logical clock, tick count, trial ids,
decision — and every tool call compiles a small fixed tree (built as YAML text, loaded with
load_tree_text, so the same validator and compiler as shipped trees apply) into a fresh Runner
whose RunContext *shares* that state. Budget guards, the Watchdog and event emission therefore
behave exactly as in `bt-grasp run`; the session only adds:

- a pre-check that refuses an action-counting tool once the action budget is spent (the core
  guard would refuse it anyway, but only after the tool's locate step had used the camera);
- the terminal state: once a guard (or `finish`) sets the episode's Decision, every further call
  returns that decision without touching the robot, until `reset_episode` starts a new episode;
- input validation and exception containment: a tool call never raises; bad input is an
  `invalid_input` result, an unexpected failure an `error` result.

Each tool tree ends in `finalize` with one of two reserved reasons (call succeeded / call failed),
so every tool tree passes `bt-grasp verify` on its own; any *other* decision at the end of a call
came from an episode guard and ends the episode.
"""

from __future__ import annotations

import inspect
import json
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bt_grasp.blackboard import Blackboard
from bt_grasp.call_limit import SETUP_LIMIT_S, limiter_for
from bt_grasp.context import EpisodeLimits, Ledger, LogicalClock, RunContext
from bt_grasp.drivers.capabilities import MobileBase, TaskSource
from bt_grasp.json_encoding import jsonable
from bt_grasp.mcp_server.inputs import InvalidInput, text_arg
from bt_grasp.mcp_server.tool_trees import CALL_OK, CALL_REASONS, tool_registry, tool_tree_text
from bt_grasp.mcp_server.tools import SessionTools
from bt_grasp.mcp_server.tree_tools import TreeTools
from bt_grasp.outcomes import Decision
from bt_grasp.services import RunMemory


class CallBlackboard(Blackboard):
    """The episode's blackboard that also remembers what the current call wrote.

    The runner drains the change log every tick, so results are read from `call_writes`
    instead: a key a step did not write this call is absent, never a stale value from an
    earlier call.
    """

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        super().__init__(initial)
        self.call_writes: dict[str, Any] = {}

    def set(self, key: str, value: Any) -> None:
        super().set(key, value)
        self.call_writes[key] = value


class ToolSession(SessionTools, TreeTools):
    """One world and one running episode; `call(tool, **args)` -> a JSON-safe result dict.

    Not thread-safe by design beyond a lock: the MCP layer serialises calls onto one thread,
    because PyBullet and real drivers expect a single caller.
    """

    def __init__(self, world: Any, limits: EpisodeLimits | None = None, episode: int = 0, seed: int = 0,
                 target: str | None = None, reset: bool = True, log_path: str | Path | None = None) -> None:
        self.world = world
        self.limits = limits or EpisodeLimits()
        self.registry = tool_registry()
        self._specs: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._log_path = Path(log_path) if log_path else None
        self.mobile = isinstance(world.driver, MobileBase)
        # every driver call runs under a wall-clock limit on this worker (bt_grasp.call_limit);
        # `cancel_call` stops waiting for one, e.g. when the client has gone away
        self.limiter = limiter_for(world.driver)
        self.episode, self.seed, self.target = episode, seed, target
        self.episodes_started = 0
        self._new_state()
        if reset:
            self._reset_driver(episode, seed, target)

    # -- state -----------------------------------------------------------------------------
    def _new_state(self) -> None:
        """Fresh episode state: counters start at zero only here, i.e. only for a new scene."""
        self.blackboard = CallBlackboard()
        self.ledger = Ledger()
        self.clock = LogicalClock()
        self.memory = RunMemory()
        self.run_id = uuid.uuid4().hex[:8]
        self.tick = 0
        self.trial = 0
        self.decision: Decision | None = None
        self.reason = ""
        self.events: list[Any] = []
        self.calls = 0
        self._errors: dict[str, Any] = {}

    def _reset_driver(self, episode: int, seed: int, target: str | None) -> None:
        driver = self.world.driver
        extra = {"target": target} if target else {}
        limit = getattr(self.world.profile, "call_timeout_s", None) or SETUP_LIMIT_S
        self.limiter.call(lambda: driver.reset(episode=episode, seed=seed, **extra), limit, "reset()")
        self.episode, self.seed, self.target = episode, seed, target
        self.episodes_started += 1
        task = driver.task() if isinstance(driver, TaskSource) else None
        if task:
            self.blackboard.set("goal.object", task)
            self.blackboard.set("goal.text", f"Grasp the {task}")

    @property
    def terminal(self) -> bool:
        return self.decision is not None

    def tools(self) -> list[str]:
        """The tool names this robot supports (mobile tools only when the driver has them)."""
        names = ["survey_scene", "locate_object", "grasp", "push", "place", "lift", "open_gripper"]
        if self.mobile:
            names += ["nav_to", "gaze_at"]
        return names + ["verify_tree", "run_tree", "finish", "reset_episode", "status"]

    def budget(self) -> dict[str, Any]:
        """What is used and what is left, attached to every result so a planner can see it."""
        lim, led = self.limits, self.ledger
        return {"actions_used": led.actions, "action_budget": lim.actions,
                "actions_left": max(0, lim.actions - led.actions),
                "perception_streak": led.perception_streak,
                "perception_streak_limit": lim.perception_streak,
                "ticks": self.tick, "max_ticks": lim.max_ticks, "clock": round(self.clock.now, 4)}

    # -- public entry --------------------------------------------------------------------------
    def call(self, tool: str, /, **args: Any) -> dict[str, Any]:
        """Run one tool; never raises (an exception becomes an `error` result)."""
        with self._lock:
            start = time.perf_counter()
            self._errors = {}
            try:
                handler: Callable[..., dict[str, Any]] | None = getattr(self, f"_tool_{tool}", None)
                if handler is None or tool not in self.tools():
                    result = self._invalid(tool, f"unknown tool {tool!r} (known: {', '.join(self.tools())})")
                elif self.terminal and tool not in ("status", "reset_episode"):
                    result = self._terminal_result(tool)
                else:
                    try:
                        inspect.signature(handler).bind(**args)
                    except TypeError as exc:  # unknown or missing arguments
                        raise InvalidInput(f"{tool}: {exc}") from None
                    result = handler(**args)
                    if self.terminal and result.get("outcome") is None:
                        # A guard (perception streak, tick cap) ended the episode in this call
                        # before its leaf produced an outcome: say so, as every later call will.
                        result.update(ok=False, outcome="terminal")
            except InvalidInput as exc:
                result = self._invalid(tool, str(exc))
            except Exception as exc:  # contain everything: a tool call must answer
                result = self._base(tool, ok=False, outcome="error")
                result["error"] = f"{type(exc).__name__}: {exc}"
            result.setdefault("wall_s", round(time.perf_counter() - start, 3))
            self.calls += 1
            self._log(tool, args, result)
            return result

    # -- result helpers ------------------------------------------------------------------------
    def _base(self, tool: str, ok: bool, outcome: str | None) -> dict[str, Any]:
        out = {"tool": tool, "ok": ok, "outcome": outcome, "terminal": self.terminal,
               "decision": self.decision.value if self.decision else None,
               "reason": self.reason or None, **self.budget()}
        if self._errors:  # a leaf caught a driver/perception exception during this call
            out["error"] = "; ".join(f"{node}: {msg}" for node, msg in self._errors.items())
        return out

    def _invalid(self, tool: str, message: str) -> dict[str, Any]:
        result = self._base(tool, ok=False, outcome="invalid_input")
        result["error"] = message
        return result

    def _terminal_result(self, tool: str) -> dict[str, Any]:
        result = self._base(tool, ok=False, outcome="terminal")
        result["hint"] = "the episode has ended; call reset_episode to start a new one"
        return result

    def _log(self, tool: str, args: dict[str, Any], result: dict[str, Any]) -> None:
        if self._log_path is None:
            return
        try:
            with self._log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"wall_time": time.time(), "run_id": self.run_id, "tool": tool,
                                     "args": jsonable(args), "result": result}, default=str) + "\n")
        except OSError:
            pass  # the log is best effort; the call's answer matters more

    # -- running a tool tree -------------------------------------------------------------------
    def _spec(self, name: str) -> Any:
        if name not in self._specs:
            from bt_grasp.spec.loader import load_tree_text

            self._specs[name] = load_tree_text(tool_tree_text(name), file=f"<mcp:{name}>",
                                               registry=self.registry)
        return self._specs[name]

    def _run(self, name: str, params: dict[str, Any]) -> tuple[dict[str, Any], list[Any], bool]:
        """Run tool tree `name` in the shared state. Returns (this call's blackboard writes,
        this call's events, whether the steps all succeeded)."""
        spec = self._spec(name)
        for key, value in params.items():
            self.blackboard.set(f"tool.{key}", value)
        result = self._run_spec(spec)
        return dict(self.blackboard.call_writes), list(result.events), result.reason == CALL_OK

    def _run_spec(self, spec: Any) -> Any:
        """Run a tree in the shared state (a tool tree, or a submitted one: tree_tools.py); a
        decision other than a tool tree's own ends the episode. Returns the EpisodeResult."""
        from bt_grasp.runner import Runner

        self.blackboard.call_writes = {}
        ctx = RunContext(registry=self.registry, limits=self.limits, driver=self.world.driver,
                         perceiver=self.world.perceiver, profile=self.world.profile,
                         blackboard=self.blackboard, clock=self.clock, ledger=self.ledger,
                         run_id=self.run_id, tick=self.tick, services=self.world.services, memory=self.memory,
                         _trial=self.trial, limiter=self.limiter)
        result = Runner(spec, ctx).run()
        self.tick, self.trial = ctx.tick, ctx._trial
        self.events.extend(result.events)
        self._errors = {k[:-len(".error")]: v for k, v in self.blackboard.call_writes.items()
                        if k.endswith(".error") and v}
        if result.reason not in CALL_REASONS:  # an episode guard decided: the episode is over
            self.decision, self.reason = result.decision, result.reason
        return result

    def _check_action_budget(self) -> bool:
        """Refuse an action once the budget is spent, with the core guard's own reason."""
        if self.ledger.actions >= self.limits.actions:
            self.decision = Decision.WAIT_CLARIFY
            self.reason = self.limits.actions_spent()
            return False
        return True

    # -- episode tools ---------------------------------------------------------------------------
    def _tool_finish(self, decision: Any = "FINALIZE", reason: Any = None) -> dict[str, Any]:
        """The planner's own terminal decision (the tool-level `finalize` / `wait_clarify`)."""
        try:
            dec = Decision(str(decision).upper())
        except ValueError:
            raise InvalidInput("decision must be FINALIZE or WAIT_CLARIFY") from None
        why = text_arg(reason, "reason", required=False) or ("done" if dec is Decision.FINALIZE
                                                              else "needs clarification")
        self.decision, self.reason = dec, why
        return self._base("finish", ok=True, outcome=dec.value)

    def _tool_reset_episode(self, episode: Any = 0, seed: Any = 0, target: Any = None) -> dict[str, Any]:
        """A new scene and a new episode: the only way the counters start again from zero."""
        for value, what in ((episode, "episode"), (seed, "seed")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"{what} must be a non-negative integer")
        text = text_arg(target, "target", required=False)
        previous = {"run_id": self.run_id, "decision": self.decision.value if self.decision else None,
                    "reason": self.reason or None, **self.budget()}
        self._new_state()
        self._reset_driver(int(episode), int(seed), text)
        result = self._base("reset_episode", ok=True, outcome="reset")
        result.update({"episode": self.episode, "seed": self.seed, "task": self.blackboard.get("goal.object"),
                       "previous_episode": previous})
        return result

    def cancel_call(self, reason: str) -> bool:
        """Stop waiting for the driver call in progress: its tool call ends the episode with
        WAIT_CLARIFY "... cancelled: <reason>" after halting and stopping the robot."""
        return self.limiter.cancel(reason)

    def status_now(self) -> dict[str, Any]:
        """`status` while another call is in progress, without waiting for it (read from another
        thread: the figures are those of its last finished tick), with `busy: true`."""
        start = time.perf_counter()
        try:
            result = self._tool_status()
        except Exception as exc:  # read while the robot thread writes: still answer
            result = self._base("status", ok=False, outcome="error")
            result["error"] = f"{type(exc).__name__}: {exc}"
        result["busy"] = True
        result["wall_s"] = round(time.perf_counter() - start, 3)
        self._log("status", {}, result)
        return result

    def _tool_status(self) -> dict[str, Any]:
        result = self._base("status", ok=True, outcome="status")
        located = self._located_now()
        result.update({
            "robot": getattr(self.world.profile, "name", None),
            "perception": getattr(self.world.perceiver, "name", None),
            "run_id": self.run_id, "episode": self.episode, "seed": self.seed,
            "task": self.blackboard.get("goal.object"),
            "located": located.name if located is not None and not isinstance(located, str) else None,
            "tools": self.tools(), "calls": self.calls, "events": len(self.events), "busy": False,
            "counters": jsonable(self.ledger.snapshot()),
        })
        return result
