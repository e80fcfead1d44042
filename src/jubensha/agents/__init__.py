"""Players: one module per architecture; an agent sees only what its seat may see."""
