"""Engines see encoded uint8 sequences, an int32 substitution table and integer penalties."""
