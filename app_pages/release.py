"""A recipient's page: the release a link (``?release=...``) describes, without any upload, and
the check of the file they received (dashboard.release_view)."""

from dashboard import release_view

release_view.render_view()
