"""Reads for pages and commands: ready querysets, no writes. One module per noun; every
scope (who may see what) comes from projects/access.py and annotation/access.py. Import
each read from its own module: this package re-exports nothing."""
