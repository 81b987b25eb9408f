"""The fixer: apply the findings' edits, add imports, verify each pass."""
