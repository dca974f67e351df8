"""One module per command: the document it prints, its table, its Markdown and its schema."""
