"""The proof that a mystery has one solution: the facts the game reveals, a solver over
them, the fact language in which generated texts state them (``phrases``: rendered by the
generator, read back by ``scripts validate`` and the ``solver`` agent), and the check that
``scripts validate`` runs on a script that carries a proof (``truth.proof``).

Modules are imported by name (``jubensha.scripts.proof.solver``...): ``scripts.model``
imports ``proof.model`` while ``proof.check`` imports ``scripts.model``.
"""
