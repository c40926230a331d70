"""`botpsy-web tasks`: was what the person asked done? A suite of tasks written as data.

A task (docs/tasks.md) is the person's message(s), what the store holds before, a fixed clock,
which acting calls the simulated person approves, and declarative checks on the outcome.

- data.py (CPython): the task files, read and checked line by line.
- checks.py, conditions.py, numbers.py (CPython): each check's verdict on a run's record;
  failures.py: the failure classes of a task not done.
- session.py (CPython and Pyodide): one task through the page's agent with the real built-in
  tools on a fresh store, turn by turn, into its record. in_worker.py is the agent worker's
  entry point (web/agent/agent-worker.js, `evalTask`); bundle.py builds the worker's bundle.
- browser.py, reference.py, runner.py, report.py, command.py (CPython): the engines, the run
  with its records file and --resume, the table.
"""
