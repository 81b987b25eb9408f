"""What each value of a file is: torch's API model, name heuristics, the per-file facts and the evidence
rules query. Rules and front ends import this package; it imports neither."""
