"""The error a user can fix: every subcommand raises it, ``nmt`` prints it in one line without a
traceback. A leaf: it imports nothing, so any stage may raise it."""


class UserError(Exception):
    """An error the user can fix; printed without a traceback."""
