"""Tools for developing and testing Arbiter, not part of the product: neither installed by
`pip install .` nor copied into the image (.dockerignore)."""
