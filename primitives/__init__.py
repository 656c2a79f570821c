"""Small dependency-free helpers every layer may use (storage, generation, agents, app): nothing of ours."""
