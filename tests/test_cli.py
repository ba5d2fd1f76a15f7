"""The bt-grasp command line: one-line errors with exit 2 for every bad input, summaries, schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from helpers import ROOT

from bt_grasp.cli import main

BAD = sorted((ROOT / "tests" / "data" / "trees" / "bad").glob("*.yaml"))
ONE_LINE = re.compile(r"^[^\n]+\.yaml:\d+:\d+: [^\n]+$")


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
@pytest.mark.parametrize("command", ["validate", "verify", "dot"])
def test_every_command_reports_a_bad_tree_as_one_line_with_exit_2(path, command, capsys):
    code = main([command, str(path)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert ONE_LINE.match(err), err
    assert "Traceback" not in err


def test_bad_input_through_the_real_entry_point_has_no_traceback(tmp_path):
    bad = tmp_path / "typo.yaml"
    bad.write_text("tree: t\nroot:\n  sequense:\n    children: [finalize]\n")
    proc = subprocess.run([sys.executable, "-m", "bt_grasp.cli", "validate", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"{bad}:3:3: unknown node type 'sequense' (did you mean sequence?)"


def test_validate_accepts_every_shipped_tree(capsys):
    trees = sorted(str(p) for p in (ROOT / "trees").glob("*.yaml"))
    assert main(["validate", *trees]) == 0
    assert capsys.readouterr().out.count(": ok") == len(trees)


def test_missing_files_and_profiles_are_one_line_errors(capsys):
    assert main(["validate", "no/such/tree.yaml"]) == 2
    assert "no/such/tree.yaml" in capsys.readouterr().err
    assert main(["run", str(ROOT / "trees" / "clutter.yaml"), "--robot", "robots/nope.yaml"]) == 2
    err = capsys.readouterr().err.strip()
    assert "robot profile not found" in err and "\n" not in err


def test_schema_is_json_schema_with_every_node_type(capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    text = json.dumps(schema)
    for name in ("sequence", "retry", "switch", "grasp", "evaluate_grasp", "finalize"):
        assert f'"{name}"' in text


def test_run_prints_one_summary_line_and_json(capsys):
    tree = str(ROOT / "trees" / "clutter.yaml")
    code = main(["run", tree, "--seed", "0", "--image-size", "256"])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and len(out) == 1
    line = re.match(r"^(FINALIZE|WAIT_CLARIFY): .+ \| actions \d+/10 \| ticks \d+ \| sim [\d.]+ s "
                    r"\| wall ([\d.]+) s episode, ([\d.]+) s process$", out[0])
    assert line, out[0]
    assert float(line[2]) <= float(line[3]), "the process includes the episode"
    main(["run", tree, "--seed", "0", "--image-size", "256", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["decision"] in ("FINALIZE", "WAIT_CLARIFY")
    assert 0 < data["wall"] <= data["process_wall"]
    assert data["action_budget"] == 10 and data["events"]
    event = data["events"][0]
    assert {"trial_id", "node", "primitive", "watchdog_label", "confidence", "exec_status", "clock",
            "wall_time", "metadata"} <= set(event)


def test_docs_node_reference_is_generated_from_the_registry(capsys):
    assert main(["nodes"]) == 0
    assert (ROOT / "docs" / "nodes.md").read_text().strip() == capsys.readouterr().out.strip(), \
        "docs/nodes.md is stale: run `bt-grasp nodes > docs/nodes.md`"


def test_the_node_reference_says_which_outcomes_succeed():
    """Every leaf with outcomes names its SUCCESS outcomes; port-dependent outcomes are listed."""
    from bt_grasp.default_registry import default_registry
    from bt_grasp.node_docs import outcome_line

    reg = default_registry()
    locate = outcome_line(reg.get("locate_object"))
    assert "ambiguous (with `ambiguity: report`) — SUCCESS on found, occluded;" in locate
    assert "dropped (with `check_hold: true`)" in outcome_line(reg.get("lift"))
    for nt in reg:
        success = getattr(nt.factory, "SUCCESS_OUTCOMES", frozenset())
        if nt.outcomes and success:
            assert f"SUCCESS on {', '.join(o for o in nt.alphabet({**{p: v.default for p, v in nt.ports.items()}}) if o in success)}" \
                in outcome_line(nt), nt.name


def test_run_json_on_stdout_is_machine_readable_in_a_fresh_process():
    proc = subprocess.run([sys.executable, "-m", "bt_grasp.cli", "run", str(ROOT / "trees" / "clutter.yaml"),
                           "--image-size", "256", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["decision"] in ("FINALIZE", "WAIT_CLARIFY")


def test_bench_help_says_what_a_bare_bench_runs(capsys):
    """A bare `bt-grasp bench` is 300 episodes on every core: --help must say so before it starts."""
    import os

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "3 trees x 1 seed x 100 episodes = 300 episodes at 512 px on every core" in text
    assert f"(default: every core, {os.cpu_count() or 1} here)" in text
    assert "(default clutter open_loop remove_all)" in text and "(default 100)" in text


def test_a_scenarios_run_that_fails_before_its_first_trial_leaves_no_results_file(tmp_path, monkeypatch, capsys):
    """A missing extra (or any failure before the first trial) writes nothing under -o."""
    import bt_grasp.mobile.scenarios as scenarios
    from bt_grasp.errors import BackendUnavailable

    def missing(*args, **kwargs):
        raise BackendUnavailable("the simulated Stretch needs its URDF: pip install 'bt_grasp[stretch-sim]'")

    monkeypatch.setattr(scenarios, "run_suite", missing)
    out = tmp_path / "runs"
    assert main(["scenarios", "--trials", "1", "-o", str(out)]) == 2
    assert "stretch-sim" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists()


def test_an_unknown_scenario_is_one_line_on_stderr_with_a_hint(capsys):
    assert main(["scenarios", "--scenario", "single_targt"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "unknown scenario 'single_targt' (did you mean single_target?)" in captured.err
