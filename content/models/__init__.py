from content.models.pair import Pair, Side
from content.models.prompt import Asset, Generator, Prompt, Response

__all__ = ["Asset", "Generator", "Pair", "Prompt", "Response", "Side"]
