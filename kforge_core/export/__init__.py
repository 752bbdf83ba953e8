"""``kforge export``: accepted kernels as a Hugging Face ``kernels`` package."""

from .accepted import AcceptedKernel, accepted_kernels
from .package import ExportResult, Refusal, prepare, write_package

__all__ = ["AcceptedKernel", "ExportResult", "Refusal", "accepted_kernels", "prepare", "write_package"]
