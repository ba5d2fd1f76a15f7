"""MCP wiring: expose a ToolSession's tools with the official `mcp` SDK (v2 `MCPServer`).

Why the indirection through one worker thread: PyBullet (and a real robot's driver) expect a
single caller, while the SDK may run handlers concurrently or on pool threads. Every tool here
is `async` and hands its call to a one-thread executor that also built the world, so the robot
only ever sees one thread and one call at a time; the event loop stays free for pings.

`mcp` is imported lazily (`require_mcp`) so the rest of bt_grasp works without it and a missing
SDK is one line, not a traceback.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from bt_grasp.errors import BackendUnavailable
from bt_grasp.mcp_server.inputs import LIFT_HEIGHT, MAX_TEXT, PUSH_DISTANCE, force_limit
from bt_grasp.spec.yaml_pos import MAX_BYTES

INSTRUCTIONS = (
    "Robot grasping tools inside one bt_grasp episode. Every result carries actions_used / "
    "action_budget and the perception streak: grasp and push spend actions; more than "
    "perception_streak_limit perception calls in a row without a grasp or push end the episode. "
    "Typical loop: survey_scene -> locate_object(name from the scene) -> grasp(target) -> "
    "if label SUCCESS: place('basket'); if EMPTY: open_gripper and retry. A result with "
    "terminal=true means the episode is over (decision + reason): every further call returns the "
    "same until reset_episode. Use finish to end the episode yourself."
)


def require_mcp() -> Any:
    """The SDK's server class, or BackendUnavailable with the install line."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        try:
            from importlib.metadata import version

            found = f" (found mcp {version('mcp')}; need >= 2)"
        except Exception:
            found = ""
        raise BackendUnavailable("bt-grasp serve needs the MCP Python SDK"
                                 f"{found}: pip install 'bt_grasp[mcp]'") from None
    return MCPServer


class SessionThread:
    """Owns the one thread the robot is driven from; builds the session on it."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                              thread_name_prefix="bt-grasp-robot")
        self.in_flight = 0  # calls submitted and not yet done: `status` then answers at once
        self._count = threading.Lock()
        try:
            self.session = self.executor.submit(factory).result()
        except BaseException:
            self.executor.shutdown(wait=False)
            raise

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        """Run session.call(tool, **args) on the robot thread (session.call never raises).
        `status` is answered at once (not queued) while another call waits for the robot."""
        if tool == "status" and not args and self.in_flight:
            return dict(self.session.status_now())
        try:
            with self._count:
                self.in_flight += 1
            future = self.executor.submit(self.session.call, tool, **args)
            future.add_done_callback(self._landed)
            return await asyncio.wrap_future(future)
        except Exception as exc:  # executor shut down, loop cancelled: still answer
            return {"tool": tool, "ok": False, "outcome": "error", "terminal": False,
                    "error": f"{type(exc).__name__}: {exc}"}

    def _landed(self, future: concurrent.futures.Future[Any]) -> None:
        """A call is done (on the robot thread): one fewer in flight."""
        with self._count:
            self.in_flight -= 1

    def close(self, reason: str = "the server is shutting down") -> None:
        """Cancel a call still waiting for the robot (its episode decides WAIT_CLARIFY after
        halting the motion and stopping the robot), then stop and close the robot on its own
        thread, each call under its wall-clock limit, then stop the thread."""
        from bt_grasp.call_limit import call_limit
        from bt_grasp.runner import describe, stop_driver, warn

        session = self.session
        session.cancel_call(reason)
        limit = call_limit(session.world.profile, 1)

        def stop_and_close() -> None:
            stop_driver(session.world.driver, session.limiter, limit)
            close = getattr(session.world, "close", None)
            if close is not None:
                session.limiter.call(close, limit, "close()")

        try:
            self.executor.submit(stop_and_close).result(timeout=4 * limit + 5)
        except Exception as exc:  # closing is best effort at shutdown: one line, never a traceback
            warn(f"the robot did not close cleanly: {describe(exc)}")
        self.executor.shutdown(wait=False)


Text = Annotated[str, Field(description="referring text from survey_scene, e.g. 'red mug'",
                            min_length=1, max_length=MAX_TEXT)]
OptText = Annotated[str | None, Field(description="referring text; omit to use the last located object",
                                      min_length=1, max_length=MAX_TEXT)]
Direction = Literal["auto", "left", "right", "up", "down"]
Count = Annotated[int, Field(ge=0)]
TreeText = Annotated[str, Field(description="the YAML text of a tree file (docs/tree-format.md)",
                                min_length=1, max_length=MAX_BYTES)]


def _strict(app: Any) -> None:
    """Publish `additionalProperties: false` and enforce it: an unknown argument is refused
    rather than silently dropped (a misspelt `distnace` would otherwise run with the default)."""
    for tool in app._tool_manager.list_tools():
        base = tool.fn_metadata.arg_model
        strict = type(f"{base.__name__}Strict", (base,),
                      {"model_config": ConfigDict(arbitrary_types_allowed=True, extra="forbid"),
                       "__module__": base.__module__})
        tool.fn_metadata.arg_model = strict
        tool.parameters["additionalProperties"] = False


def build_server(runner: SessionThread, name: str = "bt-grasp") -> Any:
    """An MCPServer whose tools forward to `runner`; mobile tools only when the robot has them."""
    MCPServer = require_mcp()
    app = MCPServer(name=name, instructions=INSTRUCTIONS)
    call = runner.call
    max_force = force_limit(runner.session)

    @app.tool(name="survey_scene",
              description="Look at the scene: objects (names to use in other tools), their "
                          "attributes and relations (left_of, partially_occluded_by, ...). "
                          "Perception: counts toward the perception streak.")
    async def survey_scene() -> dict[str, Any]:
        return await call("survey_scene")

    @app.tool(name="locate_object",
              description="Ground a referring text in a fresh frame. outcome: found | occluded "
                          "(the occluder is named) | not_found. Returns the mask summary (bbox, "
                          "pixels, 3D points, centroid in the base frame). Perception.")
    async def locate_object(target: Text) -> dict[str, Any]:
        return await call("locate_object", target=target)

    async def grasp(target: OptText = None, force: float | None = None) -> dict[str, Any]:
        return await call("grasp", target=target, force=force)

    # The force limit comes from the robot profile, so this annotation is built at run time.
    grasp.__annotations__["force"] = Annotated[float | None, Field(
        description="grip force, newtons", ge=0, le=max_force, allow_inf_nan=False)]
    app.tool(name="grasp",
             description="Locate the target (when given) and grasp it; the Watchdog labels the "
                         "attempt SUCCESS | EMPTY | SLIP | WEAK | STALL | TIMEOUT with a "
                         "confidence, and a semantic check confirms a SUCCESS holds the target. "
                         "Spends one action.")(grasp)

    @app.tool(name="push",
              description="Locate the target (when given) and push it to clear clutter. direction: "
                          "auto | left | right | up | down (image directions); distance 0.03-0.20 m. "
                          "Spends one action.")
    async def push(target: OptText = None,
                   direction: Annotated[Direction, Field(description="image direction")] = "auto",
                   distance: Annotated[float, Field(description="metres", ge=PUSH_DISTANCE[0],
                                                    le=PUSH_DISTANCE[1], allow_inf_nan=False)] = 0.10
                   ) -> dict[str, Any]:
        return await call("push", target=target, direction=direction, distance=distance)

    @app.tool(name="place",
              description="Carry the held object to a named place (the arm: 'basket') and release it.")
    async def place(target: Annotated[str, Field(description="place name", min_length=1,
                                                 max_length=MAX_TEXT)] = "basket") -> dict[str, Any]:
        return await call("place", target=target)

    @app.tool(name="lift", description="Raise the gripper, keeping the grip.")
    async def lift(height: Annotated[float, Field(description="metres", ge=LIFT_HEIGHT[0], le=LIFT_HEIGHT[1],
                                                  allow_inf_nan=False)] = 0.15) -> dict[str, Any]:
        return await call("lift", height=height)

    @app.tool(name="open_gripper", description="Open the gripper fully (e.g. after an EMPTY grasp).")
    async def open_gripper() -> dict[str, Any]:
        return await call("open_gripper")

    if runner.session.mobile:
        @app.tool(name="nav_to", description="Drive the mobile base to (x, y[, theta]) in the "
                                             "odometry frame of the episode's start, or to a named "
                                             "place when the robot knows place names.")
        async def nav_to(x: Annotated[float | None, Field(ge=-50, le=50, allow_inf_nan=False)] = None,
                         y: Annotated[float | None, Field(ge=-50, le=50, allow_inf_nan=False)] = None,
                         theta: Annotated[float | None, Field(ge=-6.2832, le=6.2832, allow_inf_nan=False)] = None,
                         place: Annotated[str | None, Field(min_length=1, max_length=MAX_TEXT)] = None
                         ) -> dict[str, Any]:
            return await call("nav_to", x=x, y=y, theta=theta, place=place)

        @app.tool(name="gaze_at", description="Point the camera at a base-frame point [x, y, z].")
        async def gaze_at(point: Annotated[list[Annotated[float, Field(allow_inf_nan=False)]],
                                           Field(min_length=3, max_length=3)]) -> dict[str, Any]:
            return await call("gaze_at", point=point)

    @app.tool(name="verify_tree",
              description="Verify a tree (YAML text) without running it: verdict PROVEN (every run "
                          "decides) | COUNTEREXAMPLE (the answers of a run that does not: a loop "
                          "marked) | NOT PROVEN | INVALID (file:line:col error); worst-case bounds; "
                          "each property HOLDS or VIOLATED with a witness run. docs/verify.md.")
    async def verify_tree(tree: TreeText) -> dict[str, Any]:
        return await call("verify_tree", tree=tree)

    @app.tool(name="run_tree",
              description="Run a tree (YAML text) as the rest of this episode, on this robot; only "
                          "a tree verify_tree finds PROVEN with every property holding: any other "
                          "is refused with its counterexample and nothing moves. Ends the episode "
                          "with the tree's decision.")
    async def run_tree(tree: TreeText) -> dict[str, Any]:
        return await call("run_tree", tree=tree)

    @app.tool(name="finish",
              description="End the episode with your decision: FINALIZE (task done or safe stop) "
                          "or WAIT_CLARIFY (need the user). Further calls return it until reset.")
    async def finish(decision: Literal["FINALIZE", "WAIT_CLARIFY"] = "FINALIZE",
                     reason: Annotated[str | None, Field(max_length=MAX_TEXT)] = None) -> dict[str, Any]:
        return await call("finish", decision=decision, reason=reason)

    @app.tool(name="reset_episode",
              description="Start a new episode on a new scene (episode, seed, optional target "
                          "object); budgets start again only here.")
    async def reset_episode(episode: Count = 0, seed: Count = 0, target: OptText = None) -> dict[str, Any]:
        return await call("reset_episode", episode=episode, seed=seed, target=target)

    @app.tool(name="status",
              description="Budgets used and left, decision, task, last located object, tools.")
    async def status() -> dict[str, Any]:
        return await call("status")

    _strict(app)
    return app
