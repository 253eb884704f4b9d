"""The secret shapes, as data: what each looks like and the cheap literals that must be in it.

Provider shapes follow gitleaks' default rules (v8.30) and detect-secrets' plugins (v1.5),
named in a comment above each rule, re-expressed: a rule keeps the token's prefix, alphabet
and length, and drops what only serves scanning a repository (entropy thresholds, path
allow-lists, trailing delimiters: the engine's boundary check replaces them).  Rules without
such a comment are our own.  Not taken over: gitleaks' keyword rules (the ``NAME=value`` rules cover their usual
spelling without their false positives) and the prefixes of smaller services.

A pattern starts with a literal whenever it can (scanned for at C speed) and hides its group
``(?P<secret>…)``, else the whole match.  Gates are *necessary* regexes in the syntax Hyperscan
shares with ``re``: whatever the pattern matches contains a match of one, and a rule runs only
where one matched (``tests/test_redaction.py`` compares with and without gates).  A gate holding
a quote, space or tab also accepts its JSON-escaped form, so a secret one level down opens it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, eq=False)  # hashed by identity: rules go in sets
class Rule:
    kind: str  # what the marker says: "[redacted: <kind>]"
    pattern: str
    gates: tuple[str, ...] = ()  # on the lower-cased text
    raw_gates: tuple[str, ...] = ()  # on the text as it is
    lowered: bool = False  # the pattern is written for the lower-cased text
    # Characters just before the match that belong to the secret: (a regex for them, fewest,
    # most).
    lead: tuple[str, int, int] | None = None
    glued: bool = False  # may follow a letter or a digit
    after: tuple[str, ...] = ()  # words a match may be glued to all the same
    handler: str = "plain"  # "pair" (see _pair) or "cookie" (each value hidden, names kept)


# Pieces --------------------------------------------------------------------------------------
_KEY = r"[A-Za-z0-9_\-]"
_B64 = r"[A-Za-z0-9+/]"
# Between a name and its value: a closing quote or backtick, spaces or tabs (aligned config
# files use many), then "=" or ":" (also ":=", "=>", "==").
SEPARATOR = r"[\"'`]?[ \t]{0,40}[=:][=>]?[ \t]{0,40}"
# The gate's form of a separator, which also accepts the escaped quote and tab of a JSON string
# (at any depth: "\\\"" is a quote two levels down).
SEPARATOR_GATE = r"(?:\\*[\"'`])?(?:[ \t]|\\+t){0,40}[=:]"
# After a header scheme word ("Bearer", "Basic"): white space, or its escape in a JSON string.
_SPACE_GATE = r"(?:[\s\x1c-\x1f]|\\+[tnr])"
# One gate for three rules that hold a dot followed by six token characters: Discord's bot
# token (a second dot after them), Google's access token ("ya29." before them) and Vault's
# ("hvs.", "hvb."); at most dots in text (".py", "e.g.") the first test already fails.
_DOT_TOKEN = r"(?:\.[a-z0-9_\-]{6}\.[a-z0-9_\-]{27}|(?:a29|hv[sb])\.[a-z0-9_\-]{6})"
# Where a key begins: a line (indented or not, also after an escaped newline or tab), a quote,
# a brace, a list's comma, a query's "?" or "&", a flag's "-".  Checked after the name (a
# lookbehind over it), so that every branch of a name starts with a literal and the regex
# engine skips ahead to it.
_AT_KEY_START = "".join(
    f"(?<![^\\s\"'`{{,;?&(\\-nt][ \\t]{{{n}}}pass)(?<![^\\\\][nt][ \\t]{{{n}}}pass)"
    for n in range(5)
)
# Names whose value is a secret, on the lower-cased text: a password word (``pwd`` only at the
# end of a longer name: ``PWD`` alone is the working directory; ``pass`` alone only where a key
# begins, not in "first pass: …"), secret, token, credentials, a git host's personal access
# token (GITHUB_PAT) and a key whose name says what it guards (AUTH_KEY, SIGNING_KEY…).
SECRET_NAME = (
    r"(?:pass(?:word|wd|phrase)|pass(?![a-z])(?<=[a-z0-9][_\-]pass)|pwd(?<=[a-z0-9][_\-]pwd)"
    r"|pass(?![a-z0-9_])" + _AT_KEY_START + r"|secret"
    r"|token|credentials?|(?:git(?:hub|lab)?|gh|gl)[_\-]pat(?![a-z])"
    r"|(?:api|secret(?:[_\-]?access)?|private|access|account|auth|signing|encryption|master"
    r"|hmac|jwt|session|client|app|service|webhook|license|deploy|admin|root|ssh|gpg|pgp"
    r"|crypt|cipher|bot)[_\-]?key)"
)
# An upper-case environment name that ends in KEY, PASS, PASSWD, PWD or PAT (DB_PASS,
# SIGNING_KEY, GITHUB_PAT), or is PASS or PASSWD itself.
ENV_SECRET_NAME = (
    r"(?<![A-Za-z0-9_])(?:[A-Z0-9]+(?:_[A-Z0-9]+)*_(?:KEY|PASS|PASSWD|PWD|PAT)|PASS|PASSWD)"
    r"(?![A-Za-z0-9_])"
)
# A bare value: not a number (max_token=4096), not a literal (null, true), not a header scheme
# (its own rule), not a marker already.  It ends at a space or a quote, at "&", "," or ";" when
# the next parameter's name follows ("?token=…&page=2", "Password=…;Database=…"), and where a
# JSON escape of a newline, tab or quote begins (an escaped backslash is part of it).
_BARE = (
    r"(?![0-9]+(?:[\s\"'&,;<>]|\\[nrt\"]|\Z))(?!(?:null|none|true|false)(?![a-z0-9_]))"
    r"(?!bearer\s)(?!basic\s)(?!\[redacted)(?!\*{3})"
    r"(?:[^\s\"'&,;<>\\]|[&,;](?=[^\s\"'<>&,;])(?![a-z_][a-z0-9_.\-]*=)"
    r"|\\\\|\\(?![nrtbfu\"/])){4,}"
)
# Name gates, by the last letters of the names above ("key" after the letter that ends
# secret, api, private, access or account).
_ENDS = ("password", "passwd", "pass", "pwd", "cret", "ken", "credential", "credentials")
_PAIR_GATES = tuple(
    end + SEPARATOR_GATE for end in (*_ENDS, "passphrase", r"[a-z0-9][_\-]?key", "[_\\-]pat")
)

# The value of a pair: quoted, or bare (a label that swallows it is passed over).
PAIR_VALUE = (
    r"(?:"
    r"\"(?P<dq>(?!\[redacted)(?:[^\"\\\n]|\\.){1,500})\""
    r"|'(?P<sq>(?!\[redacted)[^'\n]{1,500})'"
    r"|`(?P<bq>(?!\[redacted)[^`\n]{1,500})`"
    r"|(?P<bare>" + _BARE + r"(?:[ \t]{0,40}[=:][=>]?[ \t]{0,40}"
    r"(?:\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'|[^\s\"'&,;<>]+))?)"
    r")"
)
# _BARE for a pattern on the text as it is (the literals it refuses, in either case).
_BARE_RAW = "(?i:" + _BARE + ")"
# How a name that says secret ends (for names and values given apart), and its gates.
_NAME_END = (
    r"(?:password|passwd|passphrase|pass|pwd|secret|token|key|credentials?|pat(?<=[_\-]pat))"
)
_NAME_GATE_ENDS = (*_ENDS, "phrase", "key", "[_\\-]pat")
# Between such a name (and its closing quote) and the word "value": a comma, or a line break
# and a YAML list's dash; the gate is the same text, so it opens only where a pair can be.
_NAME_VALUE_GAP = r"(?:[ \t]*,?[ \t]*|[ \t]*(?:\r?\n|\\r)?(?:\\n)?[ \t]*(?:- )?)(?:\\*[\"'])?"
_NAME_VALUE_GATE = r"(?:\\*[\"'])?" + _NAME_VALUE_GAP + "value"

# "value" and its value (for names and values given apart).
_VALUE = (
    r"value(?:\\*[\"'])?[ \t]*[:=][ \t]*(?:"
    r"\\*\"(?P<dq>(?!\[redacted)[^\"\\\n]{1,500})\\*\""
    r"|'(?P<sq>(?!\[redacted)[^'\n]{1,500})'"
    r"|(?P<bare>(?!\[redacted)[^\s\"'\\,<>]{1,500}))"
)
# The "name" (or XML "key") of a name/value pair given apart, up to the name's first letter.
_NAME_KEY = r"(?:name|key)(?:\\*[\"'])?[ \t]*[:=][ \t]*(?:\\*[\"'])?"
# A line break, as it is or escaped in a JSON string.
_LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"
# Between two arguments: spaces on a command line, or the quotes and comma of an argv array
# (a JSON or Python list, at any depth of escaping); atomic, so that a long run of spaces is
# not tried again in every length.
_ARG = r"(?>[ \t]+|\\*[\"'][ \t]*,[ \t]*\\*[\"'])"
_ARG_GATE = r"(?:[ \t]+|\\*[\"'][ \t]*,[ \t]*\\*[\"'])"
# An argument's value: quoted, or bare to the next space or quote.
_ARG_VALUE = (
    r"(?:\\*\"(?P<dq>(?!\[redacted)[^\"\\\n]{1,500})\\*\""
    r"|'(?P<sq>(?!\[redacted)[^'\n]{1,500})'"
    r"|(?P<bare>(?!\[redacted)[^\s\"'\\]{1,500}))"
)


def _pair(pattern: str, gates: tuple[str, ...], *, lowered: bool = True) -> Rule:
    """A value named as a secret (``NAME=value``), labelled by its own shape when it has one."""
    return Rule("secret", pattern, gates=gates, lowered=lowered, glued=True, handler="pair")


# Provider keys and tokens: a fixed prefix, then the token's alphabet --------------------------
PROVIDER_RULES: tuple[Rule, ...] = (
    # From gitleaks anthropic-api-key, anthropic-admin-api-key.
    Rule("anthropic key", r"sk-ant-" + _KEY + "{20,}", gates=("sk-",)),
    Rule("openrouter key", r"sk-or-" + _KEY + "{20,}", gates=("sk-",)),
    # From gitleaks openai-api-key; detect-secrets OpenAIDetector.
    Rule(
        "openai key", r"sk-(?!ant-|or-)(?:proj-|svcacct-|admin-)?" + _KEY + "{20,}", gates=("sk-",)
    ),
    # From gitleaks stripe-access-token; detect-secrets StripeDetector.
    Rule(
        "stripe key",
        r"k_(?:live|test|prod)_[0-9A-Za-z]{10,99}",
        gates=("k_(?:live|test|prod)_",),
        lead=("[sr]", 1, 1),
    ),
    # From gitleaks twilio-api-key; detect-secrets TwilioKeyDetector.
    Rule("twilio key", r"SK[0-9a-fA-F]{32}(?![0-9A-Za-z])", raw_gates=("SK[0-9a-fA-F]{32}",)),
    Rule("groq key", r"gsk_[A-Za-z0-9]{40,}", gates=("gsk_",)),
    Rule("xai key", r"xai-[A-Za-z0-9]{40,}", gates=("xai-",)),
    # From gitleaks gcp-api-key.
    Rule("google api key", r"AIza[0-9A-Za-z_\-]{35}", raw_gates=("AIza",)),
    Rule("google oauth secret", r"GOCSPX-" + _KEY + "{20,}", gates=("gocspx-",)),
    Rule("google oauth token", r"ya29\.[0-9A-Za-z_\-]{20,}", gates=(_DOT_TOKEN,)),
    # From gitleaks aws-access-token; detect-secrets AWSKeyDetector.
    Rule(
        "aws access key",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])",
        raw_gates=("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    ),
    # From gitleaks aws-amazon-bedrock-api-key-long-lived.
    Rule("aws bedrock key", r"ABSK" + _B64 + "{109,269}={0,2}", raw_gates=("ABSK",)),
    # From detect-secrets AzureStorageKeyDetector.
    Rule(
        "azure storage key",
        r"AccountKey=(?P<secret>" + _B64 + "{86}==)",
        gates=("accountkey=",),
        glued=True,
    ),
    # From gitleaks github-pat, github-oauth, github-app-token, github-refresh-token.
    Rule("github token", r"gh[pousr]_[A-Za-z0-9]{36,255}", gates=("gh[pousr]_",)),
    # From gitleaks github-fine-grained-pat.
    Rule("github token", r"github_pat_[A-Za-z0-9_]{22,255}", gates=("github_pat_",)),
    # From gitleaks gitlab-pat (and the other gitlab-* token rules);
    # detect-secrets GitLabTokenDetector.
    Rule(
        "gitlab token",
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-" + _KEY + "{20,}"
        r"(?:\.[0-9a-z]{2}[0-9a-z]{7})?",
        gates=("gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-",),
    ),
    # From gitleaks gitlab-rrt.
    Rule("gitlab token", r"GR1348941" + _KEY + "{20,}", gates=("gr1348941",)),
    # From gitleaks grafana-cloud-api-token, grafana-service-account-token.
    Rule(
        "grafana token",
        r"glc_" + _B64 + "{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
        gates=("glc_", "glsa_"),
    ),
    # From gitleaks grafana-api-key.
    Rule("grafana token", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", raw_gates=("eyJrIjoi",)),
    # From gitleaks slack-bot-token, slack-user-token, slack-app-token, slack-config-*.
    Rule(
        "slack token",
        r"xox[abposre]-[A-Za-z0-9\-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{20,}"
        r"|xapp-\d-[A-Za-z0-9\-]{10,}",
        gates=("xox[abposre][-.]", "xapp-"),
    ),
    # From gitleaks slack-webhook-url.
    Rule(
        "slack webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_]{20,}",
        gates=(r"ks\.slack\.com/",),
        glued=True,
    ),
    Rule(
        "discord webhook",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_\-]{40,}",
        gates=("webhooks/",),
        glued=True,
    ),
    # From gitleaks microsoft-teams-webhook.
    Rule(
        "teams webhook",
        r"webhook\.office\.com/webhookb2/[A-Za-z0-9@/\-]{40,}",
        gates=(r"k\.office\.com/",),
        glued=True,
    ),
    # From gitleaks huggingface-access-token.
    Rule("hugging face token", r"hf_[A-Za-z]{34}(?![A-Za-z0-9])", gates=("hf_",)),
    # From gitleaks huggingface-organization-api-token.
    Rule("hugging face token", r"api_org_[A-Za-z]{34}(?![A-Za-z0-9])", gates=("api_org_",)),
    # From gitleaks npm-access-token.
    Rule("npm token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", gates=("npm_",)),
    # A package index upload token: a macaroon whose base64 names the index.
    # From gitleaks pypi-upload-token; detect-secrets PypiTokenDetector.
    Rule(
        "package index token",
        r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,}",
        gates=("pypi-ageichlwas5vcmc", "pypi-agendgvzdc5wexbplm9yzw"),
    ),
    # From gitleaks sendgrid-api-token; detect-secrets SendGridDetector.
    Rule("sendgrid key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", gates=(r"sg\.",)),
    # From gitleaks sendinblue-api-token.
    Rule("sendinblue key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", gates=("xkeysib-",)),
    # From gitleaks digitalocean-pat.
    Rule("digitalocean token", r"dop_v1_[a-f0-9]{64}", gates=("dop_v1_",)),
    # From gitleaks vault-service-token, vault-batch-token.
    Rule(
        "vault token",
        r"hvs\.[A-Za-z0-9_\-]{90,120}|hvb\.[A-Za-z0-9_\-]{138,300}",
        gates=(_DOT_TOKEN,),
    ),
    # From gitleaks postman-api-token.
    Rule("postman key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", gates=("pmak-",)),
    # From gitleaks rubygems-api-token.
    Rule("rubygems token", r"rubygems_[a-f0-9]{48}", gates=("rubygems_",)),
    # From gitleaks flutterwave-secret-key, flutterwave-encryption-key.
    Rule("flutterwave key", r"FLWSECK_TEST-[a-hA-H0-9]{12,32}(?:-X)?", gates=("flwseck_test-",)),
    # From gitleaks new-relic-user-api-key.
    Rule("new relic key", r"NRAK-[A-Za-z0-9]{27}", gates=("nrak-",)),
    # From gitleaks scalingo-api-token.
    Rule("scalingo token", r"tk-us-" + _KEY + "{48}", gates=("k-us-",)),
    # From gitleaks artifactory-api-key.
    Rule("artifactory key", r"AKCp[A-Za-z0-9]{69}", raw_gates=("AKCp",)),
    # From gitleaks azure-ad-client-secret.
    Rule(
        "azure client secret",
        r"Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        raw_gates=("Q~",),
        lead=("[A-Za-z0-9_~.]{3}[0-9]", 4, 4),
    ),
    # From gitleaks openshift-user-token.
    Rule("openshift token", r"sha256~[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])", raw_gates=("sha256~",)),
    # From gitleaks alibaba-access-key-id.
    Rule("alibaba key", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", raw_gates=("LTAI",)),
    # From gitleaks heroku-api-key-v2.
    Rule("heroku key", r"HRKU-AA[0-9A-Za-z_\-]{58}", raw_gates=("HRKU-AA",)),
    # From gitleaks facebook-page-access-token.
    Rule("facebook token", r"EAA[MC][A-Za-z0-9]{100,}", raw_gates=("EAA[MC]",)),
    # From gitleaks age-secret-key.
    Rule(
        "age secret key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        raw_gates=("AGE-SECRET-KEY-1",),
    ),
    # From gitleaks 1password-service-account-token.
    Rule("1password token", r"ops_eyJ" + _B64 + "{250,}={0,3}", raw_gates=("ops_eyJ",)),
    # From gitleaks mapbox-api-token.
    Rule("mapbox token", r"sk\.eyJ" + _KEY + r"{10,}\." + _KEY + "{20,}", raw_gates=(r"sk\.eyJ",)),
    # From gitleaks sentry-org-token.
    Rule(
        "sentry token",
        r"sntrys_eyJ" + _B64 + "{30,}={0,2}_" + _B64 + "{43}",
        raw_gates=("sntrys_eyJ",),
    ),
    # From gitleaks jwt; detect-secrets JwtTokenDetector.
    Rule(
        "jwt", r"eyJ" + _KEY + r"{8,}\.eyJ" + _KEY + r"{8,}\." + _KEY + "{8,}", raw_gates=("eyJ",)
    ),
    # "<bot id>:AA<33 chars>": matched from the colon, the id is the lead; glued to a word it
    # is not a token, except in the Bot API's ".../bot<token>/".
    # From detect-secrets TelegramBotTokenDetector.
    Rule(
        "telegram bot token",
        r":AA" + _KEY + "{33}(?![A-Za-z0-9_\\-])",
        raw_gates=(":AA",),
        lead=("[0-9]+", 8, 10),
        after=("bot",),
    ),
    # "<user id, base64>.<6>.<27+>": matched from the first dot, the user id is the lead.
    # From detect-secrets DiscordBotTokenDetector.
    Rule(
        "discord bot token",
        r"\." + _KEY + r"{6}\." + _KEY + "{27,38}(?![A-Za-z0-9_\\-])",
        gates=(_DOT_TOKEN,),
        lead=("[MNO][A-Za-z0-9_\\-]+", 24, 26),
    ),
)
# Blocks, URLs and headers --------------------------------------------------------------------
CONTEXT_RULES: tuple[Rule, ...] = (
    # To its END line; a block cut short (a preview) is hidden to the end of the text, or to
    # the end of the JSON string that holds it (escapes are read in pairs, so an escaped quote
    # does not end it and an escaped backslash before the closing quote does not hide it).
    # From gitleaks private-key; detect-secrets PrivateKeyDetector.
    Rule(
        "private key",
        r"-----BEGIN[ \t]+(?:[A-Z0-9]+[ \t]+)*PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?-----"
        r"(?:[^\"\\]|\\[\s\S])*?"
        r"(?:-----END[ \t]+(?:[A-Z0-9]+[ \t]+)*PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?-----|(?=\")|\Z)",
        gates=("begin(?:[ \\t]|\\\\+t)",),
        glued=True,
    ),
    # From detect-secrets BasicAuthDetector.
    Rule(
        "url password",
        r"://(?P<user>[^/\s:@'\"<>]{0,100}):(?P<secret>[^/\s@'\"<>]{1,200})@",
        raw_gates=(r"//[^/\s\x1c-\x1f:@'\"<>]{0,100}:",),
        glued=True,
    ),
    # A token as the whole user part of a URL (https://TOKEN@host/…).
    Rule(
        "url token",
        r"://(?P<secret>[A-Za-z0-9_\-.~]{20,200})@",
        raw_gates=(r"//[A-Za-z0-9_\-.~]{20,200}@",),
        glued=True,
    ),
    Rule(
        "bearer token",
        r"bearer(?:\s|\\[tnr])+(?P<secret>[a-z0-9\-._~+/]{16,}=*)",
        gates=("bearer" + _SPACE_GATE,),
        lowered=True,
        glued=True,
    ),
    # From gitleaks curl-auth-header.
    Rule(
        "basic auth",
        r"authorization(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?basic[ \t]+"
        r"(?P<secret>[a-z0-9+/]{8,}={0,2})",
        gates=("basic" + _SPACE_GATE,),
        lowered=True,
        glued=True,
    ),
    Rule(
        "authorization token",
        r"authorization(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?token[ \t]+"
        r"(?P<secret>[a-z0-9._~+/=\-]{8,})",
        gates=("token" + _SPACE_GATE,),
        lowered=True,
        glued=True,
    ),
    # The value of a Cookie or Set-Cookie header, to the end of the line (or of its JSON string).
    Rule(
        "cookie",
        r"cookie(?:\\?[\"'])?[ \t]*:[ \t]*(?:\\?[\"'])?(?P<secret>[^\r\n\"\\]{4,})",
        gates=("cookie" + SEPARATOR_GATE,),
        lowered=True,
        glued=True,
        handler="cookie",
    ),
    # NAME=value and "name": "value" where the name says password, secret, token or key.  A
    # label that swallows the value ("secret: NAME = value") hides the value after it too.
    _pair(
        SECRET_NAME + SEPARATOR + PAIR_VALUE,
        gates=_PAIR_GATES,
    ),
    _pair(
        ENV_SECRET_NAME
        + SEPARATOR
        + PAIR_VALUE.replace("(?P<bare>" + _BARE, "(?P<bare>" + _BARE_RAW),
        gates=tuple(end + SEPARATOR_GATE for end in ("_key", "pass", "_pwd", "_pat")),
        lowered=False,
    ),
    # A name and its value given apart: JSON ({"name": "DB_PASSWORD", "value": "…"}, a
    # Kubernetes env list), YAML ("- name: API_TOKEN" then "value: …") and XML attributes
    # (<add key="ApiKey" value="…"/>).  Matched from the end of the name (a literal), so that
    # the regex engine does not try every position of a long text.
    _pair(
        _NAME_END + r"(?:\\*[\"'])?" + _NAME_VALUE_GAP + _VALUE,
        gates=tuple(end + _NAME_VALUE_GATE for end in _NAME_GATE_ENDS),
    ),
    # <password>…</password>, <apiKey>…</apiKey>.
    _pair(
        _NAME_END + r">(?P<bare>(?!\[redacted)[^<\n]{1,500})</",
        gates=tuple(end + ">" for end in _NAME_GATE_ENDS),
    ),
    # A name and its value given apart, the value first ({"value": "…", "name": "API_TOKEN"},
    # "- value: …" then "name: API_TOKEN", <add value="…" key="ApiKey"/>).  Matched from the
    # literal "value"; the gates need the name after it.
    _pair(
        _VALUE
        + _NAME_VALUE_GAP
        + _NAME_KEY
        + r"[a-z0-9_.\-]{0,100}?"
        + _NAME_END
        + r"(?![a-z0-9])",
        gates=tuple(_NAME_KEY + "[a-z0-9_.\\-]*" + end for end in _NAME_GATE_ENDS),
    ),
    # YAML: a key that names a secret at the start of a line, its value on the next, indented
    # line, or a "|" or ">" block (every line of it).  A line that is itself a key ("token:"
    # then "  name: x") is no value.
    _pair(
        r"(?:(?m:^)|(?<=\\n)|(?<=\": \")|(?<=\":\"))[ \t]*(?:- )?(?:\\*[\"'`])?[a-z0-9_.\-]{0,60}"
        + SECRET_NAME
        + r"(?:\\*[\"'`])?[ \t]*:[ \t]*(?:"
        r"[|>][+\-]?[0-9]?[ \t]*\r?\n(?P<ind>[ \t]+)"
        r"(?P<blk>(?!\[redacted)[^\s][^\n]*(?:\r?\n(?P=ind)[^\n]*)*)"
        r"|(?:[|>][+\-]?[0-9]?[ \t]*)?" + _LINE_BREAK + r"[ \t]+"
        r"(?![a-z0-9_.\-]+:(?:\s|\\[nrt]|$))" + PAIR_VALUE + ")",
        gates=tuple(
            end + r"(?:\\*[\"'`])?[ \t]*:[ \t]*(?:[|>][+\-]?[0-9]?[ \t]*)?" + _LINE_BREAK
            for end in _NAME_GATE_ENDS
        ),
    ),
    # netrc: "machine h login u password X" (or "default …"), one field a line or all on one.
    _pair(
        r"(?:machine[ \t]+[^\s\"'\\]{1,200}|default)"
        r"(?:(?>(?:\s|\\[nrt])+)(?:login|account)[ \t]+[^\s\"'\\]{1,200})*"
        r"(?>(?:\s|\\[nrt])+)(?:password|passwd)[ \t]+" + _ARG_VALUE,
        gates=("password[ \\t]", "passwd[ \\t]"),
    ),
    # Command-line flags whose name ends in a secret word, with a space between or as an argv
    # array: --password X, --db-password "X", --token X, --api-key X; "--password", "X".  With
    # "=" (--password=X) they are pairs.
    _pair(
        r"--(?:[a-z0-9]+[_\-]){0,3}(?:password|passwd|pass|pwd|token|secret|api[_\-]?key"
        r"|private[_\-]key)" + _ARG + r"(?!-)" + _ARG_VALUE,
        gates=("[_\\-]pass", "[_\\-]pwd", "[_\\-]token", "[_\\-i]key", "[_\\-]secret"),
    ),
    # Short flags: mysql -pX, -p'X' (attached only: "-p X" asks, X is the database); sshpass
    # -p X and docker (podman, helm registry…) login -p X, attached or not; curl -u user:pw,
    # -uuser:pw.  Each on a command line or as an argv array.
    _pair(
        r"(?:mysql|mariadb)[^\n;&|]{0,200}?(?:[ \t]|\\*[\"'`])-p(?:"
        r"\\*\"(?P<dq>(?!\[redacted)[^\"\\\n]{1,200})\\*\""
        r"|'(?P<sq>(?!\[redacted)[^'\n]{1,200})'"
        r"|(?P<bare>(?!\[redacted)[^\s\"'\\\-][^\s\"'\\]{0,200}))",
        gates=("ysql", "mariadb"),
    ),
    _pair(
        r"(?:sshpass|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm(?:"
        + _ARG
        + "registry)?)"
        + _ARG
        + r"login(?:"
        + _ARG
        + r"[^\n;&|]{0,200}?)?)"
        + _ARG
        + r"-p(?:"
        + _ARG
        + r")?(?!-)"
        + _ARG_VALUE,
        gates=(
            "sshpass",
            "(?:docker|podman|nerdctl|buildah|skopeo|oras|registry)" + _ARG_GATE + "login",
        ),
    ),
    _pair(
        r"curl[^\n]{0,300}?(?:[ \t]|\\*[\"'][ \t]*,[ \t]*\\*[\"'])(?:-u|--user)"
        r"(?:" + _ARG + r"|=)?(?:\\*[\"'])?[^\s:\"'\\]{0,100}:"
        r"(?P<bare>(?!\[redacted)[^\s\"'\\@]{1,200})",
        gates=("curl",),
    ),
)

RULES: tuple[Rule, ...] = PROVIDER_RULES + CONTEXT_RULES

# Cookie attributes: their values say nothing secret.
COOKIE_ATTRIBUTES = frozenset(
    ("path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority")
)
