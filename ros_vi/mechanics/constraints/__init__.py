"""Built-in holonomic constraints (trep.constraints)."""

__all__ = []
