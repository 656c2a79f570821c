"""Turning shot requests into clip files, and clips into a film. Imports nothing of ours but `storage.run` (stdlib only)."""
