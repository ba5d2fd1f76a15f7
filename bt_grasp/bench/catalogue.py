"""The object catalogue: ≥150 graspable objects with appearance-grounded, unique names.

Names are "<size> <colour> <category>" when the catalogue holds that colour+category in more
than one size ("small red box" / "large red box"), else "<colour> <category>" ("yellow duck" is
"small yellow duck" / "large yellow duck" because ducks come in two sizes). Names are unique in
the catalogue, so a scene that samples without replacement never holds two objects of one name;
`distinguishing_name` gives the shortest name that still discriminates within a given scene.

Mesh objects reference URDFs under pybullet_data; dims = (globalScaling,). Their rgba is meant
to be applied with changeVisualShape (the meshes' own textures/colours are not the catalogue
colour). Every object has a horizontal extent ≤ 0.075 m across at least one axis so an 85 mm
gripper can close on it (checked in tests against the loaded meshes' AABBs).
"""

from __future__ import annotations

from functools import lru_cache

from .objects import ObjectSpec

MAX_GRASP_WIDTH = 0.075

COLOURS: dict[str, tuple[float, float, float, float]] = {
    "red": (0.85, 0.10, 0.10, 1.0),
    "orange": (0.95, 0.50, 0.05, 1.0),
    "yellow": (0.95, 0.85, 0.10, 1.0),
    "green": (0.10, 0.65, 0.20, 1.0),
    "blue": (0.10, 0.25, 0.85, 1.0),
    "purple": (0.50, 0.15, 0.70, 1.0),
    "pink": (0.95, 0.45, 0.70, 1.0),
    "white": (0.92, 0.92, 0.92, 1.0),
    "black": (0.08, 0.08, 0.08, 1.0),
    "brown": (0.50, 0.30, 0.12, 1.0),
}
BASIC = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "white", "black")

# Mesh extents (x, y, z) in metres at globalScaling 1, measured with pybullet's AABB.
MESH_EXTENTS: dict[str, tuple[float, float, float]] = {
    "duck_vhacd.urdf": (0.0907, 0.0854, 0.066),
    "objects/mug.urdf": (0.088, 0.1276, 0.106),
    "teddy_vhacd.urdf": (0.0841, 0.1012, 0.0707),
    "lego/lego.urdf": (0.034, 0.034, 0.025),
    "jenga/jenga.urdf": (0.15, 0.05, 0.03),
    "domino/domino.urdf": (0.0063, 0.0254, 0.0508),
}

_DENSITY = 450.0  # kg/m³: hollow plastic / light wood; keeps every object well under a 2 kg payload


def _spec(name: str, category: str, colour: str, size: str, shape: str, dims: tuple[float, ...],
          mass: float, friction: float, mesh: str | None = None, tags: tuple[str, ...] = ()) -> ObjectSpec:
    return ObjectSpec(name=name, category=category, colour=colour, size=size,  # type: ignore[arg-type]
                      shape=shape, dims=dims, rgba=COLOURS[colour], mass=round(mass, 4),  # type: ignore[arg-type]
                      friction=friction, mesh=mesh, tags=tags)


def _procedural() -> list[ObjectSpec]:
    out: list[ObjectSpec] = []
    sized: dict[str, tuple[str, dict[str, tuple[float, ...]], float]] = {
        "box": ("box", {"small": (0.040, 0.030, 0.030), "medium": (0.060, 0.045, 0.040),
                        "large": (0.090, 0.060, 0.050)}, 0.8),
        "can": ("cylinder", {"small": (0.020, 0.050), "medium": (0.028, 0.080),
                             "large": (0.034, 0.110)}, 0.7),
        "ball": ("sphere", {"small": (0.020,), "medium": (0.028,), "large": (0.035,)}, 0.9),
        "bar": ("box", {"small": (0.100, 0.025, 0.025), "large": (0.150, 0.030, 0.030)}, 0.8),
    }
    single = {
        "cube": ("box", (0.045, 0.045, 0.045), 0.8, "medium"),
        "puck": ("cylinder", (0.030, 0.020), 0.7, "medium"),
    }
    for colour in BASIC:
        for category, (shape, sizes, fr) in sized.items():
            for size, dims in sizes.items():
                out.append(_spec(f"{size} {colour} {category}", category, colour, size, shape, dims,
                                 _DENSITY * volume(shape, dims), fr,
                                 tags=("procedural",) + (("rolls",) if shape != "box" else ())))
        for category, (shape, dims, fr, size) in single.items():
            out.append(_spec(f"{colour} {category}", category, colour, size, shape, dims,
                             _DENSITY * volume(shape, dims), fr,
                             tags=("procedural",) + (("rolls",) if shape != "box" else ())))
    return out


def _meshes() -> list[ObjectSpec]:
    out: list[ObjectSpec] = []
    for colour in BASIC:
        out.append(_spec(f"small {colour} duck", "duck", colour, "small", "mesh", (0.5,), 0.04, 0.8,
                         "duck_vhacd.urdf", ("mesh", "rolls")))
        out.append(_spec(f"large {colour} duck", "duck", colour, "large", "mesh", (0.78,), 0.09, 0.8,
                         "duck_vhacd.urdf", ("mesh", "rolls")))
        out.append(_spec(f"{colour} mug", "mug", colour, "medium", "mesh", (0.7,), 0.15, 0.7,
                         "objects/mug.urdf", ("mesh",)))
        out.append(_spec(f"{colour} lego brick", "lego brick", colour, "small", "mesh", (1.5,), 0.02, 0.8,
                         "lego/lego.urdf", ("mesh",)))
    for colour in ("brown", "white", "pink"):
        out.append(_spec(f"{colour} teddy bear", "teddy bear", colour, "large", "mesh", (0.8,), 0.08, 1.0,
                         "teddy_vhacd.urdf", ("mesh", "soft")))
    for colour in ("brown", "red", "blue"):
        out.append(_spec(f"{colour} jenga block", "jenga block", colour, "large", "mesh", (0.9,), 0.05, 0.6,
                         "jenga/jenga.urdf", ("mesh",)))
    for colour in ("black", "white"):
        out.append(_spec(f"{colour} domino", "domino", colour, "small", "mesh", (1.5,), 0.02, 0.6,
                         "domino/domino.urdf", ("mesh", "thin")))
    return out


def volume(shape: str, dims: tuple[float, ...]) -> float:
    """Solid volume in m³ of a procedural shape (used for mass)."""
    import math

    if shape == "box":
        return dims[0] * dims[1] * dims[2]
    if shape == "cylinder":
        return math.pi * dims[0] ** 2 * dims[1]
    if shape == "sphere":
        return 4.0 / 3.0 * math.pi * dims[0] ** 3
    raise ValueError(f"no analytic volume for shape {shape!r}")


def extents(spec: ObjectSpec) -> tuple[float, float, float]:
    """Axis-aligned (x, y, z) extents in metres of the object in its spawn orientation."""
    d = spec.dims
    if spec.shape == "box":
        return (d[0], d[1], d[2])
    if spec.shape == "cylinder":
        return (2 * d[0], 2 * d[0], d[1])
    if spec.shape == "sphere":
        return (2 * d[0],) * 3  # type: ignore[return-value]
    ex = MESH_EXTENTS[spec.mesh or ""]
    return (ex[0] * d[0], ex[1] * d[0], ex[2] * d[0])


def graspable_width(spec: ObjectSpec) -> float:
    """Smallest horizontal extent: the width the gripper closes across."""
    ex = extents(spec)
    return min(ex[0], ex[1])


@lru_cache(maxsize=1)
def _catalogue() -> tuple[ObjectSpec, ...]:
    return tuple(_procedural() + _meshes())


def catalogue() -> list[ObjectSpec]:
    """All catalogue objects, in a fixed order (so seeded sampling is reproducible)."""
    return list(_catalogue())


def by_name(name: str) -> ObjectSpec:
    """The catalogue entry with this exact name (KeyError if none)."""
    for s in _catalogue():
        if s.name == name:
            return s
    raise KeyError(name)


def distinguishing_name(spec: ObjectSpec, others: list[ObjectSpec]) -> str:
    """Shortest appearance name that no co-present object shares.

    "red box" when it is the only red box in the scene, "small red box" when a large red box is
    also there. Colour is always kept (appearance grounding); falls back to the full name.
    """
    others = [o for o in others if o is not spec and o.name != spec.name]
    short = f"{spec.colour} {spec.category}"
    if not any(o.colour == spec.colour and o.category == spec.category for o in others):
        return short
    return spec.name
