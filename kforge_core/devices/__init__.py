"""The devices the core itself provides: the host CPU (:mod:`.cpu`). Other devices come with their plugins."""
