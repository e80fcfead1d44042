"""The run folder: the append-only game log every reader shares (eval, runs, web).

It stands below its readers so that scoring, batches and the browser read one format
without importing each other.
"""
