"""One module per ``kforge`` subcommand."""
