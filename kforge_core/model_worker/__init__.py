"""What runs a user's model in a worker process, shared by ``kforge integrate`` and ``kforge hotspots``: loading the
model (a factory or a transformers config), the backend's device, timing, and the tensors of an output. Nothing here
runs in KForge's process."""
