"""The engine: pre-filter, parse (whole or partial), walk once, run the rules that could fire."""
