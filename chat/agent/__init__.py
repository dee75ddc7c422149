"""The agent runtime: runs, the loop, LLM backends and tools."""
