"""The reference engine: the compiled tree itself (the one the Runner ticks), saved and restored
as explicit state and searched tick by tick. It needs no model of any node class."""
