"""The ``nmt`` command line: one entry point, one subcommand per stage."""
