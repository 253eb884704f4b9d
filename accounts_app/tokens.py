"""Personal API tokens, ``hxp_<key id>_<secret>``: the key id (12 hex digits) names one, the
secret (256 random bits) proves it.  Only the secret's SHA-256 is stored: with that much
randomness a slow hash adds nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import timedelta

from django.utils import timezone

from .models import ApiToken

PREFIX = "hxp_"
_TOKEN = re.compile(r"^hxp_([0-9a-f]{12})_([A-Za-z0-9_\-]{20,100})$")
LAST_USED_EVERY = timedelta(minutes=1)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create(user, *, name: str = "", expires_in_days: int | None = None) -> tuple[ApiToken, str]:
    """A new token for ``user``: the stored row, and the token text (shown once)."""
    while True:
        key_id = secrets.token_hex(6)
        if not ApiToken.objects.filter(key_id=key_id).exists():
            break
    secret = secrets.token_urlsafe(32)
    expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
    token = ApiToken.objects.create(
        user=user,
        name=name[:100],
        key_id=key_id,
        secret_hash=_digest(secret),
        expires_at=expires_at,
    )
    return token, f"{PREFIX}{key_id}_{secret}"


def revoke(token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def user_for(text: str):
    """The active user a valid, unrevoked, unexpired token text belongs to, or None."""
    match = _TOKEN.match(text.strip())
    if not match:
        return None
    key_id, secret = match.groups()
    token = ApiToken.objects.select_related("user").filter(key_id=key_id).first()
    if token is None or not hmac.compare_digest(token.secret_hash, _digest(secret)):
        return None
    if token.status != "active" or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
