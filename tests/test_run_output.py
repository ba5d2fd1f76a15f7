"""`bt-grasp run` output that tools and people can read: with --json, stdout is one JSON document
whatever the tree does (a question from `ask` goes to stderr); the summary line and the JSON name
the goal and the last Watchdog label."""

from __future__ import annotations

import io
import json

from helpers import ROOT

from bt_grasp.cli import main
from bt_grasp.mobile.user import TerminalUser
from bt_grasp.outcomes import Decision, ExecStatus, OutcomeEvent
from bt_grasp.run_summary import last_watchdog_label, summary_line
from bt_grasp.runner import EpisodeResult

ASKING = """\
tree: asking
goal: {object: "red mug"}
root:
  sequence:
    children:
      - survey_scene: {id: survey}
      - ask: {id: ask, question: "Which one?"}
      - finalize: {reason: answered}
"""


def _event(label: str | None, clock: float) -> OutcomeEvent:
    return OutcomeEvent(trial_id="t", node="grasp", primitive="grasp", watchdog_label=label,
                        exec_status=ExecStatus.SUCCESS, clock=clock)


def test_the_terminal_user_asks_on_stderr_and_reads_stdin(capsys, monkeypatch) -> None:
    """The question and what the robot sees are shown on stderr; the answer is the typed line."""
    monkeypatch.setattr("sys.stdin", io.StringIO("the red one\n"))
    user = TerminalUser()
    user.report_seen([])
    assert user.answer("Which one?", []) == "the red one"
    out = capsys.readouterr()
    assert out.out == "" and "Which one?" in out.err and "Robot sees" in out.err


def test_summary_names_the_goal_and_the_last_watchdog_label() -> None:
    """ "safe stop" alone does not say why: the line carries the goal and the last label (SLIP)."""
    result = EpisodeResult(Decision.FINALIZE, "safe stop", 9, 3.0, 1.0, 2, 10, {},
                           events=[_event("EMPTY", 1.0), _event(None, 2.0), _event("SLIP", 3.0)])
    assert last_watchdog_label(result.events) == "SLIP"
    line = summary_line(result, "Grasp the red mug")
    assert line.startswith('FINALIZE: safe stop | goal "Grasp the red mug" | watchdog SLIP | actions 2/10')
    assert " | watchdog - |" in summary_line(EpisodeResult(Decision.WAIT_CLARIFY, "x", 1, 0, 0, 0, 10, {}), None)


def test_json_stays_one_document_when_the_tree_asks(tmp_path, capsys, monkeypatch) -> None:
    """An `ask` on the arm prompts on stderr, so stdout parses as the run's JSON result."""
    tree = tmp_path / "asking.yaml"
    tree.write_text(ASKING)
    monkeypatch.setattr("sys.stdin", io.StringIO("any of them\n"))
    main(["run", str(tree), "--image-size", "128", "--json"])
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["goal"] == "Grasp the red mug" and "watchdog_label" in data
    assert "Which one?" in out.err


def test_a_goal_that_fits_no_catalogue_object_is_searched_for_and_not_found(capsys) -> None:
    """No traceback for an object the simulator cannot place: the scene is built without it and
    the episode ends WAIT_CLARIFY quoting the words (the tree here looks once)."""
    tree = ROOT / "trees" / "open_loop.yaml"
    code = main(["run", str(tree), "--goal", "Grasp the banana", "--image-size", "128", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["decision"] == "WAIT_CLARIFY" and "banana" in data["reason"]


def test_a_trees_goal_in_everyday_words_builds_its_scene(tmp_path, capsys) -> None:
    """goal: {object: "coffee mug"} (a synonym, no catalogue name) runs: one of the mugs is placed
    in view and located."""
    tree = tmp_path / "coffee.yaml"
    tree.write_text("""\
tree: coffee
goal: {object: "coffee mug"}
root:
  selector:
    children:
      - sequence:
          children:
            - survey_scene: {id: survey}
            - locate_object: {id: locate, target: "{goal.object}"}
            - finalize: {id: seen, reason: "located {goal.object}"}
      - wait_clarify: {id: gone, reason: "not found: {goal.object}"}
""")
    code = main(["run", str(tree), "--image-size", "256", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["goal"] == "Grasp the coffee mug"
    assert (data["decision"], data["reason"]) == ("FINALIZE", "located coffee mug")
