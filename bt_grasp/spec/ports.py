"""Checking one port value against its declared Port: type, choices, range, reference syntax.

Kept apart from the tree walk so that the rules for a value are in one place and the messages
are uniform: "port 'attempts' of retry must be an integer, got a string ('three')".
"""

from __future__ import annotations

import math
from typing import Any

from bt_grasp.blackboard import KEY_RE, ref_key
from bt_grasp.errors import UserError, did_you_mean, excerpt
from bt_grasp.registry import NodeType, Port
from bt_grasp.spec.model import Pos, looks_like_ref
from bt_grasp.spec.yaml_pos import PosDict, kind_name, plain

# Ports that name a blackboard key the node *reads* a label from: they must be written "{a.b}".
READ_REF_PORTS: set[tuple[str, str]] = {("switch", "on"), ("label_is", "key")}

# Ports compared with the label read through the node's READ_REF port. When a leaf in the tree
# writes that key, the value must be in its alphabet (else the comparison can never hold).
# Ports of type "label" are checked the same way, falling back to all known labels.
LABEL_VALUE_PORTS: set[tuple[str, str]] = {("label_is", "label")}

# Composite and decorator ports are literals: budgets and timeouts must be static for the
# verifier's bounds (docs/tree-format.md, Nodes). Leaves may read any port from the blackboard
# at tick time.
_STATIC_KINDS = {"composite", "decorator"}

_TYPE_WORDS = {
    "int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
    "label": "a label name", "list": "a list", "key": "a blackboard key like 'grasp.outcome'",
}


def _fail(msg: str, pos: Pos) -> UserError:
    return UserError(msg, pos.file, pos.line, pos.col)


def check_ref_syntax(value: Any, pos: Pos) -> None:
    """A braced string must be a well-formed reference "{a.b}"."""
    if looks_like_ref(value) and ref_key(value, strict=True) is None:
        raise _fail(f"malformed blackboard reference '{value}': write it like '{{goal.object}}' "
                    "(names of letters, digits and _, joined by dots)", pos)


def _unquoted_ref(value: Any) -> str | None:
    """`target: {goal.object}` unquoted is a YAML mapping {goal.object: null}; spot that."""
    if isinstance(value, PosDict) and len(value) == 1:
        (k, v), = value.items()
        if v is None and isinstance(k, str):
            return "{" + k + "}"
    return None


def check_port(nt: NodeType, port: Port, value: Any, pos: Pos) -> Any:
    """The validated (and normalised) value for `port`; raises UserError at `pos` otherwise."""
    where = f"port '{port.name}' of {nt.name}"
    braced = _unquoted_ref(value)
    if braced is not None and port.type not in ("any",):
        raise _fail(f"{where}: YAML reads unquoted {braced} as a mapping; quote blackboard "
                    f"references: \"{braced}\"", pos)
    check_ref_syntax(value, pos)
    is_ref = ref_key(value, strict=True) is not None

    if (nt.name, port.name) in READ_REF_PORTS:
        if not is_ref:
            hint = f" (write \"{{{value}}}\")" if isinstance(value, str) and KEY_RE.match(value) else ""
            raise _fail(f"{where} must be a blackboard reference like \"{{grasp.label}}\", "
                        f"got {kind_name(value)}{hint}", pos)
        return value

    if port.type == "key":
        if isinstance(value, str) and (is_ref or KEY_RE.match(value)):
            return value
        raise _fail(f"{where} must be {_TYPE_WORDS['key']}, got {kind_name(value)}", pos)

    if is_ref:
        if nt.kind in _STATIC_KINDS:
            raise _fail(f"{where} must be a literal value, not a blackboard reference: composite "
                        "and decorator settings are static so bounds can be proven", pos)
        if port.type == "label":
            raise _fail(f"{where} must be a literal label, not a blackboard reference", pos)
        return value

    if port.type == "any":
        _check_finite(where, value, pos)
        return plain(value)
    if port.type == "list":
        if not isinstance(value, list):
            raise _fail(f"{where} must be a list, got {kind_name(value)}", pos)
        _check_finite(where, value, pos)
        return plain(value)
    if port.type == "bool":
        if not isinstance(value, bool):
            raise _fail(f"{where} must be true or false, got {kind_name(value)}", pos)
        return value
    if port.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            extra = ""
            if isinstance(value, float) and value.is_integer():
                extra = f" (write {int(value)})"
            raise _fail(f"{where} must be an integer, got {kind_name(value)}{extra}", pos)
        _check_range(where, port, value, pos)
        return value
    if port.type == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(f"{where} must be a number, got {kind_name(value)}", pos)
        if not math.isfinite(value):
            raise _fail(f"{where} must be a finite number, got {value}", pos)
        _check_range(where, port, value, pos)
        return float(value)
    # str and label
    if not isinstance(value, str):
        raise _fail(f"{where} must be {_TYPE_WORDS.get(port.type, 'a string')}, "
                    f"got {kind_name(value)}", pos)
    if port.choices is not None and value not in port.choices:
        raise _fail(f"{where} must be one of {', '.join(port.choices)}, got '{value}'"
                    f"{did_you_mean(value, port.choices)}", pos)
    return value


def _check_finite(where: str, value: Any, pos: Pos) -> None:
    """No NaN or infinity anywhere inside a list/mapping value (YAML's .nan, .inf)."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise _fail(f"{where} must hold finite numbers, got {item}", pos)
        if isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)


MAX_INT = 1_000_000  # an int port without its own maximum (attempts, repeats, ...)


def _check_range(where: str, port: Port, value: float, pos: Pos) -> None:
    if port.type == "int" and port.maximum is None and value > MAX_INT:
        raise _fail(f"{where} must be <= {MAX_INT}, got {excerpt(value)}", pos)
    if port.minimum is not None and value < port.minimum:
        raise _fail(f"{where} must be >= {_num(port.minimum)}, got {_num(value)}", pos)
    if port.maximum is not None and value > port.maximum:
        raise _fail(f"{where} must be <= {_num(port.maximum)}, got {_num(value)}", pos)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and not isinstance(x, float) else str(x)
