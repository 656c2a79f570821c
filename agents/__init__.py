"""The LLM roles (planner, critics, refiner), online over the openai SDK or offline. Imports storage (schema, run) and prompts."""
