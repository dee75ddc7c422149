"""The app's settings for servers the tests start (browser tests, MCP endpoint tests):
everything as in production but the password hasher. PBKDF2's deliberate slowness (about
0.5 s a hash here) protects real passwords; a test user's password protects nothing, and
every browser test logs in."""

from chat.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
