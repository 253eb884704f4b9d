"""Sign-in hardening pieces that the settings point at.

:func:`client_ip` (for the login throttle and the audit log): for a request from a trusted
proxy, the right-most ``X-Forwarded-For`` entry, the one the proxy appended (anything left of
it could be forged); otherwise the socket's address.  A local process at the proxy's address
could still rotate the header, so from there a user name's failures from every address also
count.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress

from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from django.conf import settings
from django.contrib.auth.backends import RemoteUserBackend
from django.contrib.auth.middleware import PersistentRemoteUserMiddleware


def _valid_ip(value: str) -> str | None:
    value = value.strip()
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


@functools.lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple:
    networks = []
    for entry in entries:
        with contextlib.suppress(ValueError):
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
    return tuple(networks)


def _peer(request) -> tuple[str | None, bool]:
    """The socket's address, and whether it is one of ``HERMES_TRUSTED_PROXIES`` (behind TLS)."""
    peer = _valid_ip(request.META.get("REMOTE_ADDR", "") or "")
    if peer is None or not settings.HERMES_TRUST_FORWARDED_FOR:
        return peer, False
    ip = ipaddress.ip_address(peer)
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    networks = _networks(tuple(settings.HERMES_TRUSTED_PROXIES))
    return peer, any(ip.version == net.version and ip in net for net in networks)


def client_ip(request) -> str | None:
    """The client's address (see the module docstring for which header is trusted)."""
    peer, proxied = _peer(request)
    if proxied:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        return _valid_ip(forwarded.split(",")[-1]) or peer
    return peer


class LoginThrottleBackend(AxesStandaloneBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        if username and _too_many_for_user(request, username):
            request.axes_locked_out = True
            raise AxesBackendPermissionDenied("too many failed sign-ins for this user name")
        return super().authenticate(request, username=username, password=password, **kwargs)


def _too_many_for_user(request, username: str) -> bool:
    """Whether, from the proxy, one user name's failures from every address together reached
    ``HERMES_LOGIN_USER_FAILURE_LIMIT``."""
    if not _peer(request)[1]:
        return False
    from axes.models import AccessAttempt
    from django.db.models import Sum
    from django.utils import timezone

    since = timezone.now() - settings.AXES_COOLOFF_TIME
    failures = AccessAttempt.objects.filter(username=username, attempt_time__gte=since).aggregate(
        n=Sum("failures_since_start")
    )["n"]
    return (failures or 0) >= settings.HERMES_LOGIN_USER_FAILURE_LIMIT


class ProxyUserMiddleware(PersistentRemoteUserMiddleware):
    """Sign in the user the proxy names in ``HERMES_REMOTE_USER_HEADER`` (persistent: a
    request without it keeps its session).  Safe only when the proxy always overwrites it."""

    def __init__(self, get_response):
        super().__init__(get_response)
        # ``X-Forwarded-User`` → ``HTTP_X_FORWARDED_USER`` (how WSGI exposes it).
        self.header = "HTTP_" + settings.HERMES_REMOTE_USER_HEADER.strip().upper().replace("-", "_")


class ProxyUserBackend(RemoteUserBackend):
    """Users the proxy vouches for; new ones are created without any group (viewers)."""

    @property
    def create_unknown_user(self) -> bool:
        return bool(settings.HERMES_REMOTE_USER_CREATE)
