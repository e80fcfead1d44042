"""Experiments: run folders, the run log, batches, resume, reports."""
