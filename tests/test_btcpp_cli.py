"""`bt-grasp export --format btcpp` and `bt-grasp import`: output files, --force, errors."""

from __future__ import annotations

import argparse

import pytest
from helpers import BTCPP_DATA, ROOT, spec_of

from bt_grasp.interop.cli import add_interop_parsers


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bt-grasp")
    add_interop_parsers(parser.add_subparsers(dest="cmd", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_export_then_import_through_the_cli(tmp_path, capsys):
    xml, back = tmp_path / "tree.xml", tmp_path / "back.yaml"
    assert _run(["export", str(ROOT / "trees" / "clutter.yaml"), "--format", "btcpp",
                 "-o", str(xml)]) == 0
    assert 'BTCPP_format="4"' in xml.read_text()
    assert _run(["import", str(xml), "-o", str(back)]) == 0
    assert spec_of(back.read_text()).name == "clutter"


def test_outputs_are_never_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "tree.xml"
    out.write_text("mine")
    src = str(ROOT / "trees" / "clutter.yaml")
    assert _run(["export", src, "-o", str(out)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert out.read_text() == "mine"
    assert _run(["export", src, "-o", str(out), "--force"]) == 0
    assert out.read_text() != "mine"
    yaml_out = tmp_path / "t.yaml"
    yaml_out.write_text("mine")
    assert _run(["import", str(out), "-o", str(yaml_out)]) == 2
    assert yaml_out.read_text() == "mine"


def test_import_to_stdout_with_outcome_declarations(capsys):
    path = BTCPP_DATA / "nav2_simple_recovery_fallback.xml"
    assert _run(["import", str(path), "--outcomes", "Spin=success,running"]) == 0
    spec = spec_of(capsys.readouterr().out)
    spin = spec.node("Spin")
    assert spin.params["outcomes"] == ["success", "running"]


def test_user_errors_exit_2_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text('<root BTCPP_format="4">\n<BehaviorTree ID="A">\n</root>\n')
    assert _run(["import", str(bad)]) == 2
    assert f"{bad}:3:" in capsys.readouterr().err
    assert _run(["import", str(bad), "--outcomes", "Spin"]) == 2


def test_a_text_value_btcpp_would_read_as_a_blackboard_entry_is_refused_where_it_is_written(tmp_path, capsys):
    """BT.CPP strips the spaces and reads " {grasp.label}" as an entry: exported, the reason would
    change meaning (and come back from import as a reference), so it is refused, not written."""
    src = tmp_path / "lit.yaml"
    src.write_text('tree: lit\nroot:\n  sequence:\n    children:\n      - grasp: {id: g}\n'
                   '      - finalize: {reason: " {grasp.label}"}\n')
    out = tmp_path / "lit.xml"
    assert _run(["export", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{src}:6:28: reason: ") and "blackboard entry" in err and "\n" not in err
    assert not out.exists()
    src.write_text(src.read_text().replace('" {grasp.label}"', '"{grasp.label}"'))  # a reference: fine
    assert _run(["export", str(src), "-o", str(out)]) == 0
    assert 'reason="{grasp.label}"' in out.read_text()


def test_unknown_format_is_rejected_by_the_parser():
    with pytest.raises(SystemExit):
        _run(["export", "x.yaml", "--format", "groot"])
