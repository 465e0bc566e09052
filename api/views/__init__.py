"""API views by area: projects and tasks, pairs, the annotator's work, judging, downloads."""
