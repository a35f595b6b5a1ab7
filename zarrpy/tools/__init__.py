"""Tools on top of the API: V2 -> V3 migration and the command-line interface."""
