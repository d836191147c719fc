"""Front ends: the CLI, the flake8 plugin, output formats. None names a rule."""
