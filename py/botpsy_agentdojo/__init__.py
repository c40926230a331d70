"""AgentDojo (ETH Zurich SPY Lab's prompt-injection benchmark) through botpsy-web's own agent.

`botpsy-web agentdojo` (command.py): AgentDojo's suites and attacks (suites.py) run through one
pipeline element that is our Agent loop (element.py) over AgentDojo's functions as our tools
(tools.py, read/act declared per suite in declarations.py); a named approver answers the gate
(approvers.py); the model is the worst-case scripted obeyer (obeyer.py) or an exported folder in
the browser (models.py); AgentDojo's own checks score each run (runner.py); report.py makes the
rows. Needs the `agentdojo` package (pyproject's `agentdojo` extra); see docs/agentdojo.md.
"""
