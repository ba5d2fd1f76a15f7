"""Generated trees and test oracles shared by the tests (tests/) and the tools (tools/perf/).

`grammar`: hypothesis strategies for random and differential trees; `running`: an oracle whose
calls span ticks; `families`: the tree families whose size the scaling tool grows. This file
imports nothing; `grammar` needs hypothesis (the test extra) only when a strategy is built.
"""
