"""A set of mysteries as a dataset any evaluation harness can read (``jubensha scripts
export``): one JSONL record per multiple-choice question, each with the text a player can
read and never the truth, and a manifest that says what the set holds and how to rebuild
it (docs/benchmarks.md).

``model`` holds the formats, ``casebook`` the text of a record, ``records`` the questions
of one script, ``write`` the files, ``source`` the scripts of a written set again.
"""
