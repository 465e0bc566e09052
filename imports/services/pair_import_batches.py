"""What `pairs_import` keeps on disk instead of in memory while it imports a file.

`PreparedBatches`: the checked records, batch by batch, between the check of the whole file
and the transaction that writes it; the writer reads one batch at a time, so the import's
memory is bounded by a batch, not by the file. `WrittenFiles`: the names of the media files
the import wrote, to remove them if the transaction fails. `ProjectBefore`: what the project
held before the import, for the summary's "reused" figures.

The first two write anonymous temporary files (unlinked when made, under
ARBITER_IMPORT_TEMP_DIR when set; the records take about the data file's size on disk):
nothing else can open them, which is why pickle, written and read back by this same process,
is safe here; it never reads anything that came from outside.
"""

import gc
import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import PurePosixPath

from django.conf import settings

from content.models import Asset, Pair, Prompt
from content.rendering import image_shas
from core.media_store import media_store
from projects.models import Project

BATCH = 500  # records written together, and rows per bulk statement


def _temporary_file(mode: str, **options):
    return tempfile.TemporaryFile(
        mode, dir=getattr(settings, "ARBITER_IMPORT_TEMP_DIR", None), **options
    )


class PreparedBatches:
    """Lists of prepared records, appended and then read back in the same order."""

    def __init__(self):
        self._file = _temporary_file("w+b")
        self._count = 0

    def append(self, batch: list) -> None:
        pickle.dump(batch, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._count += 1

    def __iter__(self) -> Iterator[list]:
        self._file.seek(0)
        for _ in range(self._count):
            # A batch is tens of thousands of objects made in a burst, none of them garbage,
            # which sets off the cyclic collector over and over: 4x the load's own time.
            collecting = gc.isenabled()
            gc.disable()
            try:
                batch = pickle.load(self._file)  # our own file (see above)
            finally:
                if collecting:
                    gc.enable()
            yield batch

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "PreparedBatches":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class WrittenFiles:
    """The media files an import wrote (originals and cleaned copies), one name a line."""

    def __init__(self):
        self._file = _temporary_file("w+", encoding="utf-8")

    def add(self, name: str) -> None:
        """Note the file of this storage name (in media storage)."""
        self._file.write(name + "\n")

    def remove_orphans(self) -> None:
        """After a rollback, remove them, unless a concurrent import has since committed an
        asset for the same bytes (a batch of names at a time)."""
        self._file.seek(0)
        names = (line.rstrip("\n") for line in self._file)
        store = media_store()
        while batch := list(islice(names, BATCH)):
            stems = {name: PurePosixPath(name).stem for name in batch}  # the image's SHA-256
            hashes = set(stems.values())  # an original and its cleaned copy
            referenced = set(
                Asset.objects.filter(sha256__in=list(hashes)).values_list("sha256", flat=True)
            )
            for name, stem in stems.items():
                if stem not in referenced:
                    store.delete(name)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "WrittenFiles":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class ProjectBefore:
    """The project's last pair and prompt before an import: newer pairs are the import's
    (imports into one project take turns under its lock, and only imports make pairs)."""

    project: Project
    pair: int
    prompt: int

    @classmethod
    def of(cls, project: Project) -> "ProjectBefore":
        def last(model) -> int:
            rows = model.objects.filter(project=project).order_by("-pk")
            return rows.values_list("pk", flat=True).first() or 0

        return cls(project=project, pair=last(Pair), prompt=last(Prompt))

    def images_shown(self, among: set[str]) -> set[str]:
        """Which of `among` the project's pairs showed before (one pass over their part
        lists, stopping once all are found; none when `among` is empty)."""
        found: set[str] = set()
        if not among or not self.pair:
            return found
        contents = Pair.objects.filter(project=self.project, pk__lte=self.pair).values_list(
            "prompt__content", "response_a__content", "response_b__content"
        )
        for parts in contents.iterator(chunk_size=BATCH):
            found |= image_shas(*parts) & among
            if len(found) == len(among):
                break
        return found

    def prompts_used_since(self) -> int:
        """How many of the project's earlier prompts the pairs made since show."""
        if not self.prompt:
            return 0
        since = Pair.objects.filter(project=self.project, pk__gt=self.pair)
        return since.filter(prompt_id__lte=self.prompt).values("prompt_id").distinct().count()
