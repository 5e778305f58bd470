"""A model's text read as the one thing it means: extraction and repairs."""
