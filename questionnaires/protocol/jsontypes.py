"""JSON values as Python types, for every layer (this package imports nothing of the project).

`Json` is what `json.loads` returns and what a JSONField holds: read it by narrowing
(`isinstance`). `JsonValue` is what may be written as JSON — read-only and covariant, so a
`list[str]` or a `dict[str, int]` is one — for event data, API responses and tool results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

Json: TypeAlias = "str | int | float | bool | None | list[Json] | dict[str, Json]"
JsonObject: TypeAlias = "dict[str, Json]"
JsonValue: TypeAlias = (
    "str | int | float | bool | None | Sequence[JsonValue] | Mapping[str, JsonValue]"
)
JsonMapping: TypeAlias = "Mapping[str, JsonValue]"
