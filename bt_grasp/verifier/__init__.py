"""The verifier: every run of a tree ends in a decision, with worst-case bounds, each proven.

Laid out by role (docs/verifier-internals.md names where each idea lives):

- top level: `core.verify_tree`, the entry point (also importable from bt_grasp.verifier_api with the
  report type and the static checks), which picks an engine; `report` (VerifyResult, its JSON
  and text); `replay` (every claim replayed on the real Runner, the witnesses); `static` (what the
  structure alone says); `transitions` (the seam between a search and the machine it drives).
- `symbolic/`: the default engine. The tree's model as flat tables (`model`), ticked statement
  for statement as the Runner ticks the compiled tree (`ticker*`), driven with time left symbolic
  (`machine`, merge key in `keys`); the two-pass search over it (`explore`, `explore_runs`), its
  run graph (`graph`), the tick bound with idle ticks (`tick_bound`), properties (`properties`).
- `compiled/`: the reference engine. The compiled tree itself, saved and restored as explicit
  state (`state`, labels still readable in `liveness`), driven tick by tick (`machine`, calls
  that span ticks in `running`), the depth-first search (`search`) and its verdict (`reference`).
- `summary/`: the compositional bounds, in time polynomial in the tree size: one summary per
  node type (`rules`, with `leaves`, `loops`, `btcpp`) over cost tables (`tables`, `node_sum`),
  the tree's summary (`bounds`), its witness runs (`witness`) and the proof from it (`proof`).
- `probability/`: `verify --rates`: outcome rates (`rates`), the chances of each decision and
  the expected costs over the run graph (`chances`), as text and JSON (`report`).

The modules' former flat paths (`bt_grasp.verifier.model_machine`, ...) still import, with a
DeprecationWarning, through the alias table below (bt_grasp/_renamed.py's import hook reads it).
This file imports nothing of the verifier, so no submodule imports its package back.
"""

from __future__ import annotations

from bt_grasp._renamed import register

# former flat module -> its place in the layout by role (kept for one release)
MOVED = {
    "machine": "compiled.machine",
    "state": "compiled.state",
    "search": "compiled.search",
    "running": "compiled.running",
    "liveness": "compiled.liveness",
    "reference": "compiled.reference",
    "model": "symbolic.model",
    "model_machine": "symbolic.machine",
    "model_keys": "symbolic.keys",
    "ticker": "symbolic.ticker",
    "ticker_controls": "symbolic.ticker_controls",
    "ticker_decorators": "symbolic.ticker_decorators",
    "ticker_leaves": "symbolic.ticker_leaves",
    "ticker_state": "symbolic.ticker_state",
    "explore": "symbolic.explore",
    "explore_runs": "symbolic.explore_runs",
    "graph": "symbolic.graph",
    "ticks": "symbolic.tick_bound",
    "properties": "symbolic.properties",
    "bounds": "summary.bounds",
    "summary_rules": "summary.rules",
    "summary_tables": "summary.tables",
    "summary_model": "summary.node_sum",
    "summary_leaves": "summary.leaves",
    "summary_loops": "summary.loops",
    "summary_btcpp": "summary.btcpp",
    "summary_proof": "summary.proof",
    "summary_witness": "summary.witness",
    "chance": "probability.chances",
    "chance_report": "probability.report",
    "rates": "probability.rates",
}
# the tick cap moved out of the verifier (an episode imports no verifier code)
register({f"{__name__}.{old}": f"{__name__}.{new}" for old, new in MOVED.items()}
         | {f"{__name__}.tick_cap": "bt_grasp.tick_budget"})
