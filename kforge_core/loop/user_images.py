"""Pictures the user gives the analysis agent (``--profile-image FILE``, ``[analysis] images``): screenshots of a
GUI profiler, shown with every analysis prompt after the profile's own images.

They are checked when a run is planned (each must be a readable PNG, JPEG, GIF or WebP file) and copied into the
run directory when it starts, so a resumed run shows the analyst exactly the pictures it showed before.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import KForgeError
from ..records import Image
from ..store import RunDirectory

MIME_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
              ".webp": "image/webp"}
KEPT_IN = "inputs"


def checked_image_paths(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """``paths`` made absolute, after checking each is an image file a model can be sent."""
    checked = []
    for path in paths:
        path = Path(path).expanduser().resolve()
        if not path.is_file():
            raise KForgeError(f"profile image not found: {path}", hint="--profile-image and [analysis] images "
                                                                        "name image files")
        if path.suffix.lower() not in MIME_TYPES:
            raise KForgeError(f"profile image {path} is not a {', '.join(MIME_TYPES)} file",
                              hint="save the screenshot as PNG or JPEG")
        checked.append(path)
    return tuple(checked)


def user_images(run_dir: RunDirectory, paths: tuple[Path, ...]) -> tuple[Image, ...]:
    """The user's pictures as kept in the run directory (``inputs/image-N-NAME``), copied there the first time."""
    images = []
    for number, path in enumerate(paths, start=1):
        kept = run_dir.path / KEPT_IN / f"image-{number}-{Path(path).name}"
        if not kept.is_file():
            if not Path(path).is_file():
                raise KForgeError(f"profile image not found: {path}")
            run_dir.copy_in(Path(path), str(kept.relative_to(run_dir.path)))
        images.append(Image(kept, caption=f"a screenshot supplied by the user ({Path(path).name})",
                            mime=MIME_TYPES.get(kept.suffix.lower(), "image/png")))
    return tuple(images)
