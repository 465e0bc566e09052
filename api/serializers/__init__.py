"""API serializers: they validate input and shape output; the services decide."""
