"""The fixed texts the offline agents and the sound's effects compare words with, which the packaged sentence
embedder's table holds (`generation.minilm.TABLE`), so that a process reading its first idea reads their vectors
instead of embedding them (~150 texts: a first idea reading 1.6 → 1.1 s of CPU).

`python -m agents.offline.table` rebuilds the table after a description changes; tests/generation/test_minilm.py
fails until it is rebuilt.
"""

from __future__ import annotations


def texts() -> list[str]:
    """Every fixed description, once each, in a stable order."""
    from agents.offline import kinds, notes
    from generation.audio.ambience import EFFECTS

    fixed = [
        *(d for ds in kinds.PROTOTYPES.values() for d in ds),
        *kinds.MAKING,
        *kinds.NOT_MAKING,
        *kinds.TRAITS.values(),
        *kinds.OTHER_TRAITS,
        *notes.voice_anchors(),
        *(e.description for e in EFFECTS.values()),
    ]
    return list(dict.fromkeys(fixed))


def main() -> None:
    from generation import minilm

    fixed = texts()
    minilm.write_table(fixed)
    print(f"{minilm.TABLE}: {len(fixed)} texts")


if __name__ == "__main__":
    main()
