"""`python -m app.cli`: the same command as the `chief` script."""

from app.cli import main

main()
