"""The use-cases: one service per concern, each a class the Studio wires (`app/studio.py`).

Services stand side by side, at most 4 floors: a service holds the services below it and calls their methods,
imports nothing of a sibling but its service class, and never a front end (`app.cli`, `app.ui`) or the web
server's machinery (`app.server`); what they share is at app/'s root (`context`, `errors`, `config`, `factory`).
`tests/app/test_layers.py` reads the floors from the source, over every module here.
"""
