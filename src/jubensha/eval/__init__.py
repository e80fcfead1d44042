"""Every metric of the four papers, each a function of (script, run log, model)."""
