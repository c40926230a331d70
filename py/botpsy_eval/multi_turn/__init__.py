"""BFCL v4's multi-turn categories (`botpsy-web eval --categories multi_turn_base,...`).

A case is a conversation over stateful tool environments (a file system, a messaging app,
a trading bot, a travel API, a vehicle, tickets, math): BFCL's own classes, read from the
installed `bfcl-eval` package. The agent loop talks through every user turn with the case's
class methods as its tools; the tools really run and change the environment's state.

- data.py (CPython): the cases, their function docs, the functions that arrive later, the
  ground truth.
- environment.py, conversation.py (CPython and Pyodide): the environment built from the
  case's initial_config, the agent's tools over it, and one conversation driven turn by
  turn into a transcript (every generation, call, result and state change).
- in_worker.py (Pyodide): the agent worker's entry point (web/agent/agent-worker.js,
  `evalMultiTurnCase`); bundle.py lists what the worker's bundle carries.
- checker.py (CPython): BFCL's own multi_turn_checker on the calls the transcript records.
- browser.py, runner.py, report.py, command.py (CPython): the engines, the run, the table.

The transcript's shape is documented in docs/eval-multi-turn.md.
"""
