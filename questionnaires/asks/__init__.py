"""Structured information collection (spec 004): `ask_user_options` asks, structured
answers, and the consultation state they fill."""
