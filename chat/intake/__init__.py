"""The built-in offline intake agent, driven by YAML intake definitions."""
