"""Questionnaire analytics: how people answer each card definition (issue 26, item 5).

`outcomes` is the one module that reads the kinds' rows and says what happened to each
card shown (the seam new outcomes slot into); `refresh` records that incrementally in
`CardInstance` rows and keeps the per-definition rollups (`CardDefinition`,
`DefinitionQuestion`) in step; `selectors` and `charts` serve the admin pages
(`admin.py`). Kinds never import this package: it reads them, after the fact.
"""
