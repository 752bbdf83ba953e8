"""The two agents: generation (writes and repairs candidates) and performance analysis (recommends changes)."""

from .analysis import AnalysisAgent, AnalysisRequest, RoundNote
from .generation import GenerationAgent, GenerationRequest, Reference, RetrievedReference
from .prompt import Prompt
from .reply_parser import ParsedReply, parse_reply
from .views import CandidateView, Feedback, PrecisionTerms

__all__ = [
    "AnalysisAgent", "AnalysisRequest", "CandidateView", "Feedback", "GenerationAgent", "GenerationRequest",
    "ParsedReply", "PrecisionTerms", "Prompt", "Reference", "RetrievedReference", "RoundNote", "parse_reply",
]
