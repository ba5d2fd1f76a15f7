"""Generated trees and test oracles shared by the tests (tests/) and the tools (tools/perf/).

`grammar`: hypothesis strategies for random and differential trees; `running`: an oracle whose
calls span ticks; `families`: the tree families whose size the scaling tool grows; `faults`: a fault-injecting
driver and perceiver (and a robot and camera without physics) for testing what a run does when
they fail, also for your own driver. This file
imports nothing; `grammar` needs hypothesis (the test extra) only when a strategy is built.
"""
