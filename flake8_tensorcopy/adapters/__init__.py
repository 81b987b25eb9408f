"""Front ends for other tools: the flake8 plugin and the LibCST codemod."""
