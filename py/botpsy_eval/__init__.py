"""Function-calling accuracy through the whole pipeline (`botpsy-web eval`).

BFCL's single-turn cases (data.py) become the agent's tools (schema.py); the agent renders
each prompt and reads the model's calls back (pipeline.py); the browser runtime or the
PyTorch reference generates (browser.py, reference.py); an AST checker following BFCL's
rules scores the calls (checker.py); runner.py drives it and report.py prints it.
"""
