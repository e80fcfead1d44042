"""Model clients behind one small async interface, and the wrappers around them."""
