"""Views of the sessions app, a module per page family."""
