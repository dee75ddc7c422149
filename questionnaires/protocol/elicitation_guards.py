"""What an MCP server may not do to a person or to the host, for `elicitation_schema`:
ask for a secret, however it is spelled, or send a regular expression that takes
exponential time; and the `format` checks of what a person types, linear too.

Pure: standard library and RE2 (google-re2, linear-time matching).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

import re2

MAX_SCANNED = 10_000  # characters of a text looked at for secret words

# Words that mean "a secret", matched on `_readable` text. Names are split at camelCase,
# `_` and `-` first, so `apiKey`, `api_key` and `API-KEY` all read "api key"; "secretary"
# is not "secret". Latin-script words as regular expressions (written as `_readable` text
# reads: lower case, no accents), whole words only:
_LATIN_SECRETS = (
    r"pass\s?words?|passwd|pass\s?phrases?|pass\s?codes?|pwd|tokens?|api\s?keys?|"
    r"access\s?keys?|secrets?|private\s?keys?|credentials?|pins?|pin\s?codes?|otp|cvv|cvc|"
    # de, fr, es, pt, nl, sv, da, no, fi, pl, cs, hu, tr, hr, id, vi
    r"passwort|kennwort|mot de passe|contrasena|senha|wachtwoord|losenord|adgangskode|"
    r"passord|salasana|haslo|hasło|heslo|jelszo|sifre|lozinka|kata sandi|mat khau"
)
# Other scripts, as people write them (read through `_readable` like the text); Chinese,
# Japanese, Korean, Thai, Arabic, Hebrew, Hindi and Persian words need no word boundary.
_WORD_SECRETS = ("пароль", "пароля", "пин код", "токен", "κωδικός πρόσβασης")
_SCRIPT_SECRETS = (
    "密码", "密碼", "口令", "令牌", "密钥", "秘钥", "パスワード", "暗証番号", "パスコード",
    "トークン", "비밀번호", "암호", "كلمة المرور", "كلمة السر", "סיסמה", "סיסמא", "पासवर्ड",
    "รหัสผ่าน", "رمز عبور",
)  # fmt: skip


def _readable(text: str) -> str:
    """``text`` as a person reads it: compatibility forms folded (NFKC: full-width,
    ligatures), zero-width and other format characters gone, accents dropped, case
    folded, camelCase, `_` and `-` split into words."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).replace("_", " ").replace("-", " ")
    text = unicodedata.normalize("NFKD", text.casefold())
    return unicodedata.normalize("NFC", "".join(c for c in text if not unicodedata.combining(c)))


SECRET_WORDS = re.compile(
    rf"\b(?:{_LATIN_SECRETS}|{'|'.join(re.escape(_readable(w)) for w in _WORD_SECRETS)})\b|"
    + "|".join(re.escape(_readable(w)) for w in _SCRIPT_SECRETS)
)
# Cyrillic and Greek letters that look like Latin ones ("pаsswоrd" with Cyrillic а, о).
_LOOK_ALIKES = str.maketrans(
    "аеорсухкмнтвіјѕԁһӏԛԝаΑΒΕΖΗΙΚΜΝΟΡΤΥΧαβεικνορτυχ",
    "aeopcyxkmhtbijsdhlqwaABEZHIKMNOPTYXabeikvoptux",
)


def secret_words(text: Any) -> str:
    """The first secret word in ``text`` ("" if none, or if it isn't text), read as is
    and with Cyrillic and Greek look-alikes read as Latin ("pаsswоrd")."""
    if not isinstance(text, str):
        return ""
    readable = _readable(text[:MAX_SCANNED])
    for reading in (readable, readable.translate(_LOOK_ALIKES)):
        found = SECRET_WORDS.search(reading)
        if found:
            return found.group(0)
    return ""


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 1 << 20  # refuses patterns whose program is huge, e.g. (a{999}){999}
    return re2.compile(pattern, options=options)


def pattern_problem(pattern: str) -> str:
    """Why RE2 can't run a server's `pattern` ("" when it can)."""
    try:
        _compiled(pattern)
    except re2.error:
        return "pattern is not a regular expression RE2 runs (no backreferences or lookaround)"
    return ""


def pattern_matches(pattern: str, value: str) -> bool:
    """JSON Schema semantics (a match anywhere), in linear time."""
    return _compiled(pattern).search(value) is not None


# Python's `\s` on text (RE2's is ASCII only): ASCII white space, the separators \x1c-\x1f,
# NEL and every Unicode space, line and paragraph separator.
_SPACE = r"\s\x{0b}\x{1c}-\x{1f}\x{85}\p{Z}"
FORMAT_PATTERNS = {
    "email": rf"[^@{_SPACE}]+@[^@{_SPACE}]+\.[^@{_SPACE}]+",
    "uri": rf"[A-Za-z][A-Za-z0-9+.-]*:[^{_SPACE}]+",
    "date-time": (
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
        r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?"
    ),
    # a `datetime-local` value: a wall-clock time without an offset
    "local-date-time": r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?",
}
"""A `format`'s shape, matched against the whole of a typed value by `format_matches`."""


def format_matches(fmt: str, value: str) -> bool:
    r"""Whether all of ``value`` has the shape of `FORMAT_PATTERNS`' ``fmt``, in RE2:
    linear in the value (Python's `re` took ~0.7 s on a crafted 10,000-character email,
    its `[^@\s]+\.` backtracking to every dot)."""
    return _compiled(FORMAT_PATTERNS[fmt]).fullmatch(value) is not None
