"""The translation catalogs: ``locale/<lang>/LC_MESSAGES/django.po`` compiled to ``.mo``.

A small reader of the gettext ``.po`` format and a writer of the binary ``.mo`` format that
Python's :mod:`gettext` (and so Django) loads, so that building the catalog needs no system
``msgfmt``: ``manage.py compile_catalogs`` runs it from ``make run`` and ``make test``, and a
test checks the committed ``.mo`` files are what their ``.po`` compiles to.

Like ``msgfmt``, fuzzy and untranslated entries are left out (the page then shows English).
"""

from __future__ import annotations

import ast
import struct
from dataclasses import dataclass, field
from pathlib import Path

MO_MAGIC = 0x950412DE


@dataclass
class Entry:
    msgid: str = ""
    msgid_plural: str | None = None
    msgctxt: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    references: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str | None, str]:
        return (self.msgctxt, self.msgid)

    @property
    def fuzzy(self) -> bool:
        return "fuzzy" in self.flags

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and all(self.msgstr.values())


def _unquote(text: str) -> str:
    text = text.strip()
    if not (len(text) >= 2 and text[0] == text[-1] == '"'):
        raise ValueError(f"not a quoted .po string: {text!r}")
    # A .po string uses C escapes, which a Python string literal reads the same way.
    return ast.literal_eval(text)


def parse_po(text: str) -> list[Entry]:
    """The entries of a ``.po`` file, the header (empty msgid) included; obsolete ones left out."""
    entries: list[Entry] = []
    current = Entry()
    started = False
    last: tuple[str, int] | None = None

    def finish():
        nonlocal current, started, last
        if started:
            entries.append(current)
        current, started, last = Entry(), False, None

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            finish()
            continue
        if line.startswith("#~"):
            continue
        if line.startswith("#"):
            if last is not None and last[0] == "msgstr":
                finish()
            if line.startswith("#,"):
                current.flags.update(f.strip() for f in line[2:].split(",") if f.strip())
            elif line.startswith("#:"):
                current.references.extend(line[2:].split())
            continue
        if line.startswith('"'):
            if last is None:
                raise ValueError(f"continuation line outside an entry: {raw!r}")
            name, index = last
            value = _unquote(line)
            if name == "msgstr":
                current.msgstr[index] += value
            else:
                setattr(current, name, (getattr(current, name) or "") + value)
            continue
        keyword, _, rest = line.partition(" ")
        if keyword in ("msgctxt", "msgid") and last is not None and last[0] == "msgstr":
            finish()
        started = True
        if keyword.startswith("msgstr["):
            index = int(keyword[7:-1])
            current.msgstr[index] = _unquote(rest)
            last = ("msgstr", index)
        elif keyword == "msgstr":
            current.msgstr[0] = _unquote(rest)
            last = ("msgstr", 0)
        elif keyword in ("msgid", "msgid_plural", "msgctxt"):
            setattr(current, keyword, _unquote(rest))
            last = (keyword, 0)
        else:
            raise ValueError(f"unknown .po line: {raw!r}")
    finish()
    return entries


def mo_bytes(entries: list[Entry]) -> bytes:
    """The ``.mo`` image of the translated, non-fuzzy entries (the header always)."""
    pairs: dict[bytes, bytes] = {}
    for entry in entries:
        is_header = entry.msgid == "" and entry.msgctxt is None
        if not is_header and (entry.fuzzy or not entry.translated):
            continue
        key = entry.msgid
        if entry.msgid_plural is not None:
            key += "\0" + entry.msgid_plural
        if entry.msgctxt is not None:
            key = entry.msgctxt + "\x04" + key
        value = "\0".join(entry.msgstr[i] for i in sorted(entry.msgstr))
        pairs[key.encode()] = value.encode()
    keys = sorted(pairs)
    count = len(keys)
    header_size = 7 * 4
    originals_at = header_size
    translations_at = originals_at + count * 8
    data_at = translations_at + count * 8
    originals, translations, blob = [], [], bytearray()
    for key in keys:
        originals.append((len(key), data_at + len(blob)))
        blob += key + b"\0"
    for key in keys:
        value = pairs[key]
        translations.append((len(value), data_at + len(blob)))
        blob += value + b"\0"
    out = bytearray(
        struct.pack("<7I", MO_MAGIC, 0, count, originals_at, translations_at, 0, data_at)
    )
    for length, offset in originals + translations:
        out += struct.pack("<2I", length, offset)
    return bytes(out + blob)


def catalogs(locale_dir: Path) -> list[Path]:
    """Every ``.po`` file under a ``locale`` directory."""
    return sorted(Path(locale_dir).glob("*/LC_MESSAGES/*.po"))


def compile_catalog(po_path: Path) -> Path:
    """Write the ``.mo`` next to ``po_path`` (only when it changes); its path."""
    mo_path = po_path.with_suffix(".mo")
    image = mo_bytes(parse_po(po_path.read_text(encoding="utf-8")))
    if not mo_path.exists() or mo_path.read_bytes() != image:
        mo_path.write_bytes(image)
    return mo_path
