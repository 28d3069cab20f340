"""Cardboard's rules engine: pure, stateless, standard library only."""
