"""Importers of games played elsewhere into run folders of ours."""
