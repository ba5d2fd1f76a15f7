"""JSON Schema of tree files, generated from pydantic models built per registered node type.

Each node type becomes a `<Type>Fields` model (its ports with types, enums for choices,
defaults and descriptions; `id`; and `children`/`child`/`cases`/`default` by arity) wrapped in
a single-key `<Type>Node` model. `Node` is the oneOf of all wrappers plus the bare names of
leaves without required ports, so editors autocomplete node types and their ports. The schema
describes the syntax; the loader's checks (labels against writers, unique ids, include
cycles) go further.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union, cast  # dynamic unions need the old spellings

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model

from bt_grasp.default_registry import default_registry
from bt_grasp.outcomes import LABELS
from bt_grasp.registry import NodeType, Port, Registry
from bt_grasp.spec.model import KEY_PATTERN, Budgets

_REF = Annotated[str, Field(pattern=rf"^\{{{KEY_PATTERN}\}}$", description="blackboard reference")]
_PARAM = Annotated[str, Field(pattern=r"^\$\{[A-Za-z_]\w*\}$", description="file parameter")]
_TEMPLATE = Annotated[str, Field(pattern=r"\$\{[A-Za-z_]\w*\}",
                                 description="text with file parameters")]
_KEY = Annotated[str, Field(pattern=rf"^(\{{{KEY_PATTERN}\}}|{KEY_PATTERN})$")]
_STATIC_KINDS = {"composite", "decorator"}
_FORBID = ConfigDict(extra="forbid", populate_by_name=True)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_")) or "Node"


def _port_type(nt: NodeType, port: Port, labels: tuple[str, ...]) -> Any:
    """The Python type pydantic turns into this port's schema."""
    from bt_grasp.spec.ports import READ_REF_PORTS

    if (nt.name, port.name) in READ_REF_PORTS:
        return Union[_REF, _TEMPLATE]  # noqa: UP007
    num: dict[str, Any] = {}  # pydantic range constraints -> JSON Schema minimum/maximum
    if port.minimum is not None:
        num["ge"] = port.minimum
    if port.maximum is not None:
        num["le"] = port.maximum
    base: Any
    if port.type == "key":
        return Union[_KEY, _TEMPLATE]  # noqa: UP007
    if port.choices:
        base = Literal[tuple(port.choices)]
    elif port.type == "int":
        base = Annotated[int, Field(strict=True, **num)]
    elif port.type == "float":
        base = Annotated[float, Field(**num)]
    elif port.type == "bool":
        base = bool
    elif port.type == "label":
        base = Literal[labels]
    elif port.type == "list":
        base = list[Any]
    elif port.type == "any":
        return Any
    else:
        return str  # free text: references and parameters are strings too
    if nt.kind in _STATIC_KINDS or port.type == "label":
        return Union[base, _PARAM]  # noqa: UP007 - literals only: bounds must be static
    return Union[base, _REF, _PARAM]  # noqa: UP007 - leaves may read the blackboard


def _field_name(name: str) -> str:
    """A Python attribute for a YAML key that cannot clash with keywords or BaseModel
    attributes (ports such as `on`, `copy` or `json`); the key itself is the alias."""
    return f"f_{name}"


def _fields_model(nt: NodeType, labels: tuple[str, ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        _field_name("id"): (Optional[str], Field(None, alias="id",  # noqa: UP045
                                                 description="unique node id; default <type>_<n>")),
    }
    for port in nt.ports.values():
        default = ... if port.required else port.default
        extra: dict[str, Any] = {"description": port.doc} if port.doc else {}
        fields[_field_name(port.name)] = (_port_type(nt, port, labels),
                                          Field(default, alias=port.name, **extra))
    if nt.arity == "many":
        # "Node": the dynamic union model of build_models, resolved by its model_rebuild; mypy
        # cannot see a model made at run time, hence the name-defined ignores.
        fields[_field_name("children")] = (list["Node"], Field(..., alias="children", min_length=1))  # type: ignore[name-defined]  # noqa: F821
    elif nt.arity == "one":
        fields[_field_name("child")] = ("Node", Field(..., alias="child"))  # noqa: F821
    elif nt.arity == "cases":
        fields[_field_name("cases")] = (dict[str, "Node"], Field(  # type: ignore[name-defined]  # noqa: F821
            default_factory=dict, alias="cases", description="label -> node"))
        fields[_field_name("default")] = (Optional["Node"], Field(  # noqa: UP045, F821
            None, alias="default", description="node for labels without a case"))
    return create_model(f"{_camel(nt.name)}Fields", __config__=_FORBID,
                        __doc__=nt.doc or None, **fields)


def _wrapper(name: str, fields_model: Any, optional: bool, doc: str) -> type[BaseModel]:
    typ: Any = Optional[fields_model] if optional else fields_model  # noqa: UP045
    fields: dict[str, Any] = {_field_name(name): (typ, Field(..., alias=name))}
    return create_model(f"{_camel(name)}Node", __config__=_FORBID, __doc__=doc or None, **fields)


class IncludeFields(BaseModel):
    """Expand another tree file here; its node ids are prefixed '<id>/'."""

    model_config = _FORBID
    f_file: str = Field(..., alias="file", description="path relative to this file")
    f_params: dict[str, Any] = Field(default_factory=dict, alias="params",
                                     description="values for the included file's params")
    f_id: str | None = Field(None, alias="id", description="prefix of the included node ids")


class BudgetsFields(BaseModel):
    """Episode budgets (literal integers)."""

    model_config = ConfigDict(extra="forbid")
    actions: int = Field(Budgets.actions, ge=0, strict=True,
                         description="grasp + push calls per episode")
    perception_streak: int = Field(Budgets.perception_streak, ge=0, strict=True,
                                   description="consecutive perception calls without manipulation")
    max_ticks: int | None = Field(None, ge=1, strict=True,
                                  description="hard cap on ticks (left out: the tree's own bound)")


def build_models(registry: Registry) -> tuple[type[BaseModel], type[RootModel[Any]]]:
    """(TreeFile model, Node model) for the node types of `registry`."""
    labels = tuple(dict.fromkeys(list(LABELS) + sorted(registry.all_outcomes())))
    models: list[type[BaseModel]] = []
    alternatives: list[Any] = []
    bare: list[str] = []
    for nt in sorted(registry, key=lambda t: t.name):
        fields_model = _fields_model(nt, labels)
        needs_fields = nt.arity != "none" or any(p.required for p in nt.ports.values())
        wrapper = _wrapper(nt.name, fields_model, not needs_fields, nt.doc)
        models += [fields_model, wrapper]
        alternatives.append(wrapper)
        if not needs_fields:
            bare.append(nt.name)
    for name in ("include", "subtree"):
        wrapper = _wrapper(name, IncludeFields, False, IncludeFields.__doc__ or "")
        models.append(wrapper)
        alternatives.append(wrapper)
    if bare:
        alternatives.append(Literal[tuple(bare)])
    # A union of models made at run time: typed as Any, since no static type can name it.
    node_union: Any = cast(Any, Union)[tuple(alternatives)]  # noqa: UP007
    node_model: type[RootModel[Any]] = type(
        "Node", (cast(Any, RootModel)[node_union],),
        {"__doc__": "A node: {type: {fields}}, or the bare name of a leaf.", "__module__": __name__})
    namespace = {"Node": node_model}
    for m in models:
        m.model_rebuild(_types_namespace=namespace)
    node_model.model_rebuild(_types_namespace=namespace)
    tree_model = create_model(
        "TreeFile", __config__=ConfigDict(extra="forbid"),
        __doc__="A bt_grasp behavior tree file.",
        tree=(str, Field(..., description="the tree's name")),
        description=(str, Field("", description="free text")),
        goal=(dict[str, Any], Field(default_factory=dict,
                                    description='default goal, e.g. {object: "red mug"}')),
        budgets=(BudgetsFields, Field(default_factory=BudgetsFields)),
        params=(dict[str, Any], Field(default_factory=dict,
                                      description='file parameters {name: default}, used as "${name}"')),
        nodes=(list[str], Field(default_factory=list,
                                description='user node classes, "package.module:Class"')),
        root=(node_model, Field(..., description="the root node")),
    )
    return tree_model, node_model


def tree_json_schema(registry: Registry | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of tree files for `registry` (default: the built-ins)."""
    tree_model, _ = build_models(registry or default_registry())
    schema = tree_model.model_json_schema(by_alias=True)
    node = schema.get("$defs", {}).get("Node", {})
    if "anyOf" in node:  # the single-key alternatives are mutually exclusive
        node["oneOf"] = node.pop("anyOf")
    for definition in schema.get("$defs", {}).values():
        for prop in definition.get("properties", {}).values():
            # Optional ports without a default: absent, not null (the loader rejects null).
            if "default" in prop and prop["default"] is None:
                del prop["default"]
                if prop.get("anyOf") and {"type": "null"} in prop["anyOf"]:
                    prop["anyOf"].remove({"type": "null"})
                    if len(prop["anyOf"]) == 1:
                        prop.update(prop.pop("anyOf")[0])
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "bt_grasp tree file"
    return schema
