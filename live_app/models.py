"""What the failures page keeps in the app's database: the counts of each block of message
ids of each state.db file, a cache rebuilt from the store (docs/failures.md).
"""

from django.db import models


class FailureBlock(models.Model):
    """The failure groups of messages ``(block, block + size]`` of one file, read up to
    ``upto``; ``digest`` their sums for a window that holds the whole block (at ``upto``)."""

    # The file: 63 bits of a hash of its identity (a replaced file starts afresh).
    store_key = models.BigIntegerField()
    profile = models.CharField(max_length=200)
    size = models.IntegerField()
    block = models.BigIntegerField()
    upto = models.BigIntegerField()
    # [[hour, source, model, tool, kind, count, [failing message ids]], …]
    groups = models.JSONField(default=list)
    # {"first_hour": …, "totals": [[source, model, tool, kind, count], …],
    #  "hourly": [[hour, kind, count], …]}, or None when not yet summed at ``upto``.
    digest = models.JSONField(null=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["store_key", "size", "block"], name="failure_block_per_file"
            )
        ]

    def __str__(self) -> str:
        return f"{self.profile}: ids {self.block + 1}–{self.block + self.size} read to {self.upto}"
