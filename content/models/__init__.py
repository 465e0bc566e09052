from content.models.pair import Pair, PairSearch, Side
from content.models.prompt import Asset, Generator, Prompt, Response

__all__ = ["Asset", "Generator", "Pair", "PairSearch", "Prompt", "Response", "Side"]
