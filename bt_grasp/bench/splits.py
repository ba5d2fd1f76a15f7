"""Dev and test seeds: disjoint ranges, so a held-out figure stays held out.

Why: every threshold in perception and the trees was set by looking at episodes of some seeds;
a figure on those seeds measures the tuning, not the method. Tune on dev seeds only; report each
change on test seeds never used before, and record them as spent (SPENT_TEST_SEEDS, and the
list in docs/benchmark.md), so the next change is reported on fresh ones.
"""

from __future__ import annotations

from bt_grasp.errors import UserError

SPLITS = ("dev", "test")
# A scene is fixed by its episode seed = base seed + 1000 × episode (pybullet_arm/episodes.py), so
# base seeds split by their value below 1000: base 1003 would be base 3's episode 1.
DEV_RANGE = range(0, 500)  # every base seed read so far is dev (docs/benchmark.md, "Dev and test seeds")
TEST_RANGE = range(500, 1000)  # each used for one report, then spent
DEV_SEEDS = (0, 1, 2, 3, 4, 5)  # what --split dev runs: the seeds tuned on so far
SPENT_TEST_SEEDS: tuple[int, ...] = (*range(500, 632), 650)  # reported on (docs/benchmark.md)


def split_of(seed: int) -> str:
    """The split a base seed belongs to ("dev" or "test"); a UserError outside 0-999."""
    if seed in DEV_RANGE:
        return "dev"
    if seed in TEST_RANGE:
        return "test"
    raise UserError(f"--seeds {seed}: a split's base seeds lie in 0-999 (dev 0-499, test 500-999); "
                    f"episode seed = base + 1000 × episode, so {seed} repeats base {seed % 1000}'s scenes")


def fresh_test_seeds(n: int = 1) -> list[int]:
    """The n lowest test seeds not yet spent."""
    out: list[int] = []
    seed = TEST_RANGE.start
    while len(out) < n:
        if seed not in SPENT_TEST_SEEDS:
            out.append(seed)
        seed += 1
    return out


def seeds_for(split: str | None, seeds: list[int] | None, default: list[int]) -> list[int]:
    """The base seeds to run: `seeds` checked against `split`, or the split's own (dev: DEV_SEEDS;
    test: the lowest fresh test seed), or `default` with neither. A seed outside the split, or a
    spent test seed, is one UserError line naming the ranges."""
    if split is None:
        return list(seeds) if seeds else list(default)
    if split not in SPLITS:
        raise UserError(f"--split {split}: unknown (dev or test)")
    if not seeds:
        return list(DEV_SEEDS) if split == "dev" else fresh_test_seeds()
    for s in seeds:
        if split_of(s) != split:
            raise UserError(f"--seeds {s} is a {split_of(s)} seed, not a {split} one "
                            f"(dev: 0-499, test: 500-999; see docs/benchmark.md)")
        if split == "test" and s in SPENT_TEST_SEEDS:
            raise UserError(f"--seeds {s}: test seed already spent (use fresh ones: "
                            f"{' '.join(map(str, fresh_test_seeds(len(seeds))))})")
    return list(seeds)
