"""The Story screen's values: the API's table form of the bible read back into characters (a character keeps its
references and voice by name)."""

from __future__ import annotations


def rows_to_characters(rows, known=()) -> list[dict]:
    """Dataframe rows [name, description] -> character dicts (blank rows dropped); a character of `known` (the
    version's) keeps its reference images and voice by name, which the table does not show."""
    by_name = {c.name: c for c in known}
    out = []
    for row in table_rows(rows):
        name, desc = (str(x).strip() if x is not None else "" for x in (list(row) + ["", ""])[:2])
        if name or desc:
            had = by_name.get(name)
            out.append(
                {
                    "name": name,
                    "description": desc,
                    "references": list(had.references) if had else [],
                    "voice": had.voice.model_dump() if had and had.voice else None,
                }
            )
    return out


def table_rows(value) -> list[list]:
    if value is None:
        return []
    if hasattr(value, "values") and hasattr(value, "columns"):  # a pandas DataFrame
        return value.values.tolist()
    if isinstance(value, dict):  # the API's {"headers", "data"} form
        return value.get("data") or []
    return list(value)
