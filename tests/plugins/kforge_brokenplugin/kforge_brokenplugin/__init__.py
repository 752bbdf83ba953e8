"""A plugin that fails to import, as a plugin with a missing dependency would."""

import kforge_dependency_that_is_not_installed  # noqa: F401
