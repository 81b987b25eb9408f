"""Front end: the `flake8-tensorcopy` command (check, fix, explain, rules) and its output formats."""
