"""The one per-file pipeline: findings as every front end reports them (noqa applied, notebook cells)."""
