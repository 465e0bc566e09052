"""Reading pair files from outside: formats, image checks, and the all-or-nothing import."""
