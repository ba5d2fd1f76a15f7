"""Trace files, writer and reader together (kept for older imports): the writer is
bt_grasp/trace_writer.py, the reader bt_grasp/trace_reader.py, the header record
bt_grasp/trace_header.py and the JSON value encoding bt_grasp/json_encoding.py."""

from __future__ import annotations

from bt_grasp.json_encoding import encode_record as encode_record
from bt_grasp.json_encoding import finite as finite
from bt_grasp.json_encoding import jsonable as jsonable
from bt_grasp.json_encoding import jsonable_changes as jsonable_changes
from bt_grasp.trace_reader import MAX_STRUCTURE_DEPTH as MAX_STRUCTURE_DEPTH
from bt_grasp.trace_reader import TornLine as TornLine
from bt_grasp.trace_reader import Trace as Trace
from bt_grasp.trace_reader import clock_of as clock_of
from bt_grasp.trace_reader import no_header_error as no_header_error
from bt_grasp.trace_reader import parse_record as parse_record
from bt_grasp.trace_reader import read_trace as read_trace
from bt_grasp.trace_writer import TraceWriter as TraceWriter
