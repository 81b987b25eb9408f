"""Which files and which rules: options, the pyproject table, discovery, gitignore patterns."""
