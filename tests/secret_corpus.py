"""A generated corpus of the secret shapes the README lists, in every spelling.

Each :class:`Line` is one line of text as an agent's terminal, a config file or a tool call
would hold it, and the value planted in it.  The values come from a seeded generator (a
literal key in the source would trip secret scanners), so the corpus is the same on every run.
:func:`corpus` crosses each shape with its spellings: names in every case, separators with
and without spaces (also fullwidth), every quoting, and the places the shape lives in (a
command line, an argv array, JSON, YAML, INI, netrc, XML).
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass

from tests.test_redaction_shapes import _strings as decoded_strings

ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Line:
    family: str
    text: str
    value: str  # the secret planted in ``text``


class Values:
    """Fake secrets from a seeded generator, each different from the others."""

    def __init__(self, seed: int = 20260105) -> None:
        self.rng = random.Random(seed)

    def password(self) -> str:
        # A letter and a digit first, so no value reads as a number or a word of the language.
        rng = self.rng
        return (
            rng.choice(string.ascii_letters)
            + rng.choice(string.digits)
            + "".join(rng.choice(ALNUM + "_-.!+") for _ in range(rng.randint(12, 28)))
            + rng.choice(ALNUM)
        )

    def token(self, alphabet: str, size: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(size))


# Names that say secret, in the spellings configs use.
NAMES = (
    "password",
    "passwd",
    "pass",
    "passphrase",
    "secret",
    "token",
    "api_key",
    "apiKey",
    "api-key",
    "client_secret",
    "auth_token",
    "access_token",
    "private_key",
    "db_password",
    "db_pass",
    "mysql_pwd",
    "github_pat",
    "signing_key",
    "credentials",
)
SEPARATORS = ("=", " = ", ":", ": ", "  =  ", "\t=\t", ":=", " => ", "：", "＝", " ： ")
QUOTES = ("", "'", '"', "`")


def _cases(name: str) -> tuple[str, ...]:
    return (name, name.upper(), name[:1].upper() + name[1:])


def pairs(values: Values) -> Iterator[Line]:
    """NAME=value in every case, separator and quoting."""
    for name in NAMES:
        for spelled in _cases(name):
            for separator in SEPARATORS:
                for quote in QUOTES:
                    value = values.password()
                    yield Line("pair", f"{spelled}{separator}{quote}{value}{quote}", value)
            value = values.password()
            yield Line("pair", f"export {spelled.upper()}={value}", value)
            value = values.password()
            yield Line("pair", f"`{spelled}`: `{value}`", value)


def documents(values: Values) -> Iterator[Line]:
    """The pair in JSON, YAML (same line, next line, blocks), INI, a query string."""
    for name in NAMES:
        for spelled in _cases(name):
            value = values.password()
            yield Line("json", json.dumps({"user": "deploy", spelled: value}), value)
            value = values.password()
            yield Line("json", json.dumps({spelled: value}, indent=2), value)
            value = values.password()
            yield Line("yaml", f"db:\n  {spelled}: {value}\n  port: 5432", value)
            value = values.password()
            yield Line("yaml next line", f"db:\n  {spelled}:\n    {value}\n  port: 5432", value)
            for block in ("|", ">", "|-", ">+"):
                value = values.password()
                yield Line("yaml block", f"{spelled}: {block}\n  {value}\nport: 5432", value)
            value = values.password()
            yield Line("ini", f"[client]\nuser = deploy\n{spelled} = {value}\n", value)
            value = values.password()
            yield Line("query", f"GET /login?user=deploy&{spelled}={value}&next=/", value)


# Names of environment variables and settings given apart from their value.
APART_NAMES = (
    *("GITHUB_TOKEN", "DB_PASSWORD", "API_KEY", "STRIPE_SECRET", "GITHUB_PAT", "ApiKey"),
    *("PASSPHRASE", "credentials", "Pass"),
)


def name_value_apart(values: Values) -> Iterator[Line]:
    """{"name": N, "value": X} either way round, in JSON, YAML and XML."""
    for name in APART_NAMES:
        for first in ("name", "value"):
            value = values.password()
            pair = {"name": name, "value": value}
            if first == "value":
                pair = {"value": value, "name": name}
            yield Line("name/value", json.dumps({"env": [pair]}), value)
            value = values.password()
            lines = [f"name: {name}", f"value: {value}"]
            if first == "value":
                lines.reverse()
            yield Line("name/value", "env:\n  - " + "\n    ".join(lines) + "\n", value)
            value = values.password()
            attributes = [f'key="{name}"', f'value="{value}"']
            if first == "value":
                attributes.reverse()
            yield Line("name/value", f"<add {' '.join(attributes)} />", value)


# Long flags with a value, and the commands that take them.
FLAGS = (
    "password",
    "passwd",
    "pass",
    "token",
    "api-key",
    "api_key",
    "apikey",
    "secret",
    "client-secret",
    "db-password",
    "auth-token",
    "access-token",
    "private-key",
)


def _argv(words: list[str]) -> str:
    return json.dumps(words)


def command_lines(values: Values) -> Iterator[Line]:
    """Flags with "=", a space or attached, quoted or not; and each as an argv array."""
    for flag in FLAGS:
        for spelled in (flag, flag.upper()):
            for command in ("psql", "mysql", "tool run"):
                for form in ("--{f} {v}", "--{f}={v}", '--{f} "{v}"', "--{f} '{v}'", '--{f}="{v}"'):
                    value = values.password()
                    text = f"{command} {form.format(f=spelled, v=value)} --host db"
                    yield Line("flag", text, value)
            value = values.password()
            words = ["tool", f"--{spelled}", value, "--host", "db"]
            yield Line("argv", _argv(words), value)
    short = (
        "mysql -u root -p{v} app",
        "mysql -p'{v}'",
        'mysql -p"{v}" -h db',
        "mysqldump -uroot -p{v} app",
        "mariadb -p{v}",
        "sshpass -p {v} ssh admin@10.0.0.5",
        "sshpass -p{v} scp f host:",
        "sshpass -p '{v}' ssh h",
        "docker login -p {v}",
        "docker login -u bot -p {v} ghcr.io",
        'docker login -u bot -p "{v}" reg',
        "podman login -u bot -p {v} quay.io",
        "helm registry login -u bot -p {v} r",
        "curl -u admin:{v} https://api.internal",
        "curl -uadmin:{v} https://api.internal",
        "curl --user admin:{v} https://x",
        "curl --user=admin:{v} https://x",
        "curl -s -u 'admin:{v}' https://x",
        'curl -u "admin:{v}" https://x',
    )
    for form in short:
        value = values.password()
        yield Line("short flag", form.format(v=value), value)
    for words in (
        ["sshpass", "-p", "{v}", "ssh", "admin@10.0.0.5"],
        ["mysql", "-u", "root", "-p{v}", "app"],
        ["mysql", "--password", "{v}"],
        ["docker", "login", "-u", "bot", "-p", "{v}", "ghcr.io"],
        ["curl", "-u", "admin:{v}", "https://x"],
        ["curl", "-uadmin:{v}", "https://x"],
        ["psql", "--password", "{v}"],
    ):
        value = values.password()
        yield Line("argv", _argv([w.format(v=value) for w in words]), value)


def netrc(values: Values) -> Iterator[Line]:
    for layout in (
        "machine api.internal login deploy password {v}",
        "machine api.internal\n  login deploy\n  password {v}\n",
        "default login anonymous password {v}",
        "machine h login u passwd {v}",
        "MACHINE h LOGIN u PASSWORD {v}",
    ):
        value = values.password()
        yield Line("netrc", layout.format(v=value), value)


PEM_KINDS = ("", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ")


def private_keys(values: Values) -> Iterator[Line]:
    """PEM blocks with every header spacing; the value is a line of the body."""
    b64 = ALNUM + "+/"
    for kind in PEM_KINDS:
        for space in (" ", "  ", "\t"):
            header = f"-----BEGIN{space}{kind.replace(' ', space)}PRIVATE{space}KEY-----"
            footer = header.replace("BEGIN", "END")
            body = [values.token(b64, 64) for _ in range(3)]
            text = "\n".join([header, *body, footer])
            yield Line("private key", text, body[1])
    body = [values.token(b64, 64) for _ in range(3)]
    block = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(body)
    yield Line("private key", block + "\n-----END PGP PRIVATE KEY BLOCK-----", body[1])


def provider_tokens(values: Values) -> Iterator[Line]:
    """A few provider shapes with their prefix, in prose and as an environment line."""
    urlsafe = ALNUM + "_-"
    for token in (
        "sk-proj-" + values.token(urlsafe, 60),
        "ghp_" + values.token(ALNUM, 36),
        "github_pat_11A" + values.token(ALNUM, 19) + "_" + values.token(ALNUM, 59),
        "glpat-" + values.token(urlsafe, 20),
        "AKIA" + values.token(string.ascii_uppercase + "234567", 16),
        "xoxb-" + values.token(string.digits, 12) + "-" + values.token(ALNUM, 24),
        "sk_live_" + values.token(ALNUM, 24),
    ):
        yield Line("provider", f"the key is {token} (do not share)", token)
        yield Line("provider", json.dumps({"model": "gpt-4o", "headers": {"x-key": token}}), token)


def urls(values: Values) -> Iterator[Line]:
    for scheme in ("postgres", "mysql", "redis", "https", "amqp"):
        value = values.password()
        yield Line("url", f"{scheme}://admin:{value}@db.internal:5432/app", value)


FAMILIES = (
    pairs,
    documents,
    name_value_apart,
    command_lines,
    netrc,
    private_keys,
    provider_tokens,
    urls,
)


def corpus(seed: int = 20260105) -> list[Line]:
    values = Values(seed)
    return [line for family in FAMILIES for line in family(values)]


# Where a line is stored: as it is, inside a JSON string (a tool result), inside a tool call's
# arguments (JSON in a JSON string), and with its letters written as \u escapes inside a JSON
# document (how a JSON writer that escapes everything stores it).
def _u_escaped(text: str) -> str:
    return "".join(
        f"\\u{ord(c):04x}" if c.isalpha() and i % 3 == 0 else json.dumps(c)[1:-1]
        for i, c in enumerate(text)
    )


PLACES = {
    "as is": lambda text: text,
    "json string": lambda text: json.dumps({"output": text}),
    "tool-call arguments": lambda text: json.dumps(
        [{"function": {"name": "terminal", "arguments": json.dumps({"command": text})}}]
    ),
    "\\u escapes": lambda text: '{"model_config": "' + _u_escaped(text) + '"}',
}


def leaked(output: str, value: str) -> bool:
    """Whether ``value`` can be read in ``output`` or in any string decoded from it."""
    return any(value in text for text in decoded_strings(output))
