"""Find secrets in a file's text and replace their values with a marker before anything is indexed.

Theory of operation:

* Four kinds of rule, each naming what it found (the name is what the build report counts):
  provider tokens (one literal-prefixed pattern each: AWS key ids, GitHub, GitLab, Slack,
  Stripe, OpenAI, Anthropic, Google, Hugging Face, npm, PyPI, SendGrid, JWT ...), private key
  blocks, credentials in URLs (``postgres://user:PASS@host``), Authorization header values
  (``Bearer ...``, ``Basic ...``), and ``secret_assignment``: a value assigned to a
  secret-looking name in any syntax (YAML ``password: x``, INI ``password = x``, JSON, TOML,
  env files, ``export``, Dockerfile ``ENV``, ``--password x``, code ``api_key = "x"``,
  ``os.environ.setdefault("API_KEY", "x")``, ``env["TOKEN"] = "x"``).
* The token patterns follow gitleaks' rule set (MIT) and detect-secrets' plugins
  (Apache-2.0); the name list follows detect-secrets' keyword plugin. Neither library runs
  here: detect-secrets scans about 40 s per 100k lines, far too slow for every build
  (bench/secret_bench.py measures both).
* Speed. Python's regex engine scans fast only for a literal prefix, so each token pattern
  starts with a literal, and the assignment and header rules look only at lines that hold
  one of a few keywords (found with ``str.find`` on the lower-cased text).
* Values, not names. An assignment counts only when the value is a literal that could be a
  credential: not a placeholder (``changeme``, ``<your-key>``, ``${VAR}``, ``{{ x }}``), not
  a name (``"password_confirm"``, ``"LlamaTokenizer"``), not a path or a bool, at least six
  characters, and of some randomness (Shannon entropy). In code only quoted literals count
  (``password = request.form["password"]`` is an expression); in configuration and
  documents an unquoted value counts too.
* Redaction replaces the value only, with ``«redacted:RULE»``, so the line stays readable
  and every line keeps its number (spans and citations stay valid).
* What cannot work: a secret in prose or in a plain comment (``# the prod password is
  hunter2``), a random string under an innocent name (``X = "a8f3..."``), a passphrase with
  spaces, a value split across lines or built at run time.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["Finding", "Redaction", "find_secrets", "redact", "MARKER"]

MARKER = "«redacted:{rule}»"

# Data formats: a value under a secret-looking name is data, even when it looks like a name
# ("password: super-secret-value"); in code and documents such a literal is usually a name.
_DATA_LANGUAGES = frozenset({"yaml", "ini", "toml", "json", "shell", "makefile", "dockerfile", None})
# Languages whose unquoted values are data, not expressions.
_CONFIG_LANGUAGES = (_DATA_LANGUAGES - {"json"}) | {"markdown", "rst", "text", "sql"}


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret value at ``text[start:end]``, found by ``rule``."""

    rule: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    counts: dict[str, int]  # rule -> values replaced
    lines: int  # lines that held at least one secret


# --- provider tokens --------------------------------------------------------------------

# (rule, pattern, needs a non-word character before it)
_TOKEN_RULES = tuple(
    (name, re.compile(rx), bounded)
    for name, rx, bounded in (
        ("aws_access_key_id", r"AKIA[A-Z0-9]{16}(?![A-Za-z0-9])", True),
        ("aws_access_key_id", r"ASIA[A-Z0-9]{16}(?![A-Za-z0-9])", True),
        ("github_token", r"gh[pousr]_[A-Za-z0-9]{36,}", True),
        ("github_token", r"github_pat_[A-Za-z0-9_]{22,}", True),
        ("gitlab_token", r"glpat-[A-Za-z0-9_-]{20,}", True),
        ("slack_token", r"xox[abposr]-[A-Za-z0-9-]{10,}", True),
        ("slack_webhook", r"hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}", False),
        ("stripe_key", r"sk_live_[A-Za-z0-9]{16,}", True),
        ("stripe_key", r"rk_live_[A-Za-z0-9]{16,}", True),
        ("stripe_key", r"sk_test_[A-Za-z0-9]{16,}", True),
        ("stripe_key", r"rk_test_[A-Za-z0-9]{16,}", True),
        ("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{32,}", True),
        ("openai_key", r"sk-[A-Za-z0-9_-]{32,}", True),
        ("google_api_key", r"AIza[A-Za-z0-9_-]{35}", True),
        ("huggingface_token", r"hf_[A-Za-z0-9]{34,}", True),
        ("npm_token", r"npm_[A-Za-z0-9]{36}", True),
        ("pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", True),
        ("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", True),
        ("digitalocean_token", r"do[pro]_v1_[a-f0-9]{64}", True),
        ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", True),
        ("azure_storage_key", r"AccountKey=[A-Za-z0-9+/=]{40,}", False),
        ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", True),
    )
)
_PRIVATE_KEY_RE = re.compile(r"-----BEGIN[ A-Z0-9]{0,40} PRIVATE KEY(?: BLOCK)?-----")
_MARKER_ONLY_RE = re.compile(r"(?:\s|«redacted:\w+»|\\n)*")
_TOKEN_PLACEHOLDERS = ("example", "xxxxxxxx", "00000000")


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


_MAX_KEY_CHARS = 20_000  # a 16k-bit RSA key is about 12k characters of base64
# base64 (maybe quoted, maybe with "\n" escapes) or an armour header ("Proc-Type: 4,ENCRYPTED")
_ARMOUR_LINE_RE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=,\"'\\-]|: )*[ \t]*")


def _armour_end(text: str, start: int) -> int:
    """Where the base64 lines after a key header stop (a header quoted in prose has none)."""
    pos = text.find("\n", start)
    if _ARMOUR_LINE_RE.fullmatch(text, start, len(text) if pos < 0 else pos) is None:
        return start  # the header's own line goes on with prose
    while pos >= 0 and pos - start < _MAX_KEY_CHARS:
        nxt = text.find("\n", pos + 1)
        line_end = len(text) if nxt < 0 else nxt
        if not text[pos + 1 : line_end].strip() or _ARMOUR_LINE_RE.fullmatch(text, pos + 1, line_end) is None:
            return pos
        pos = nxt
    return len(text) if pos < 0 else pos


def _token_findings(text: str) -> list[Finding]:
    out: list[Finding] = []
    body_end = 0
    ends: list[int] | None = None  # every "-----END", found once: a hostile file may have many headers
    for m in _PRIVATE_KEY_RE.finditer(text):
        if m.start() < body_end:
            continue  # inside the previous key's body
        if ends is None:
            ends = [e.start() for e in re.finditer("-----END", text)]
        i = bisect.bisect_left(ends, m.end())
        if i < len(ends) and ends[i] - m.end() <= _MAX_KEY_CHARS:
            body_end = ends[i]
        else:  # no END: the body is the base64-looking lines that follow
            body_end = _armour_end(text, m.end())
        body = text[m.end() : body_end]
        if body.strip() and _MARKER_ONLY_RE.fullmatch(body) is None:
            out.append(Finding("private_key", m.end(), body_end))
    for rule, rx, bounded in _TOKEN_RULES:
        for m in rx.finditer(text):
            start = m.start()
            if bounded and start and _is_word_char(text[start - 1]):
                continue
            low = m.group().lower()
            if not any(word in low for word in _TOKEN_PLACEHOLDERS):
                out.append(Finding(rule, start, m.end()))
    return out


# --- credentials in URLs ----------------------------------------------------------------

_URL_CREDENTIALS_RE = re.compile(
    r"://(?P<user>[^\s:/?#@'\"<>`]{0,64}):(?P<pw>[^\s/?#@'\"<>`]{1,1000})@(?=[\w\[])"
)
_URL_PLACEHOLDERS = frozenset(
    {"password", "pass", "passwd", "pw", "pwd", "secret", "token", "x", "xxx", "foo", "bar", "baz", "test"}
)


def _url_findings(text: str) -> list[Finding]:
    out = []
    for m in _URL_CREDENTIALS_RE.finditer(text):
        pw = m.group("pw")
        low = pw.lower()
        if low in _URL_PLACEHOLDERS or _is_template(pw) or "«" in pw or set(pw) <= {"*", "x", "X", "."}:
            continue
        if pw == m.group("user"):
            continue  # a well-known default ("guest:guest", "postgres:postgres"), not a secret
        out.append(Finding("url_credentials", m.start("pw"), m.end("pw")))
    return out


# --- keyword lines: assignments and headers ---------------------------------------------

_KEYWORDS = ("passw", "pwd", "pass", "secret", "token", "key", "auth", "credential")

# only at the start of a name, and without backtracking into it: linear on a hostile 1 MB line
_NAME = r"(?<![\w.$@-])(?P<name>[A-Za-z_$@][\w.$@-]{0,80}+)"
_QUOTED = r"""(?P<q>['"`])(?P<qv>(?:(?!(?P=q))[^\\\n]|\\.){1,20000})(?P=q)"""
_ASSIGN_RE = re.compile(
    _NAME + r"(?P<close>['\"`]?\]?)[ \t]*(?P<op>:=|=>|==|!=|\|\|=|\?\?=|=|:|,)[ \t]*"
    r"(?:[rbuRBU@]{0,2}" + _QUOTED + r"|(?P<bare>[^\s'\"`]++))"
)
# API_KEY: str = "...", const apiKey: string = "..." (a type between the name and the value)
_ANNOTATED_RE = re.compile(_NAME + r":[ \t]*[\w.\[\], |]{1,60}+=[ \t]*[rbuRBU@]{0,2}" + _QUOTED)
# #define API_KEY "..." (C, C++)
_DEFINE_RE = re.compile(r"#[ \t]*define[ \t]+" + _NAME + r"[ \t]+" + _QUOTED)
# ENV NAME value (Dockerfile), --password value (command lines)
_SPACED_RE = re.compile(
    r"(?:^|[ \t])(?:ENV[ \t]+|--)(?P<name>[\w.-]{1,80})[ \t]+(?P<bare>[^\s'\"`=-][^\s'\"`]*)", re.MULTILINE
)
_HEADER_RE = re.compile(
    r"\b(?:bearer|basic|token|digest)[ \t]+(?P<v>[A-Za-z0-9._~+/:-]{8,}+=*)(?![\w{$<])", re.IGNORECASE
)

_STRONG_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey")
_EXACT_NAMES = frozenset({"pwd", "pass", "auth", "pw"})
_KEY_QUALIFIERS = frozenset(
    {"secret", "private", "api", "access", "auth", "client", "signing", "encryption", "master", "account"}
    | {"service", "db", "database", "app", "license", "consumer", "subscription", "crypt"}
)
_NAME_NOT_SECRET = frozenset(
    """name names file files path paths dir url uri urls endpoint type types field fields header headers
    env var vars length len id ids prefix suffix policy validator validators reset label placeholder
    regex pattern ttl expiry expires expiration timeout count min max required enabled mode format
    class manager provider source ref hint help message msg prompt text title key_id keyid limit
    size kind version param params arg args option options setting settings attr column col index
    idx schema model form input widget display visible hidden confirm confirmation changed
    strength location store backend backends handler callback method methods fn func function
    cache lifetime age rotation salt_name mask endpoint_url host port user username login email""".split()
)
_PART_RE = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _name_parts(name: str) -> list[str]:
    return [p.lower() for p in _PART_RE.findall(name.rsplit(".", 1)[-1].strip("$@"))]


def secret_name(name: str) -> bool:
    """True when an assigned name says its value is a credential (``DB_PASSWORD``, ``apiKey``,
    ``SECRET_KEY``, ``x-auth-token``), not when it names one (``password_field``, ``token_type``)."""
    parts = _name_parts(name)
    if not parts or parts[-1] in _NAME_NOT_SECRET or "public" in parts or "publishable" in parts:
        return False
    last = parts[-1]
    if len(parts) == 1 and last in _EXACT_NAMES:
        return True
    if last in _EXACT_NAMES and len(parts) > 1 and last != "auth":  # db_pass, mysql_pwd
        return True
    if last.endswith(_STRONG_ENDINGS):
        return True
    earlier = set(parts[:-1])
    if last in {"key", "base", "value", "hash", "string", "str"} and earlier & (_KEY_QUALIFIERS | {"secret"}):
        return True
    return last == "credentials" and len(parts) > 1


_NOT_SECRET_VALUES = frozenset(
    """true false yes no on off null none nil undefined required optional string str bytes int bool
    password passwd secret token apikey api_key changeme change_me default empty hidden private public
    bearer basic header query cookie env environment dummy example placeholder sample test none""".split()
)
_PLACEHOLDER_PARTS = (
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourpass",
    "xxxx",
    "***",
    "...",
    "…",
)
_IDENTIFIER_RE = re.compile(
    r"_*[A-Za-z][A-Za-z]*(?:[_.-]+[A-Za-z]+)+_*|[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+){2,}"
)
# a regular expression, not a credential: a class "[A-Z]", a group "(?", an escape "\d", a count "{2,}"
_REGEX_RE = re.compile(r"\[[^\]]+\]|\(\?|\\[dswbDSW.]|\{\d+,\d*\}")
_TEMPLATE_RE = re.compile(r"\$\{|\{\{|\$\(|%\(|%[sdr]|\{[\w.]*\}|<[\w .-]*>|^\$\w|%\w+%")


def _is_template(value: str) -> bool:
    return _TEMPLATE_RE.search(value) is not None


def shannon_entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


_BRACKETS = frozenset("()[]{}<>")


_COLOUR_RE = re.compile(r"#[0-9a-fA-F]{3,8}")
_ESCAPES_RE = re.compile(r"(?:\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8}|.))+")


def credential_value(value: str, *, quoted: bool, data: bool = False, value_quote: str = "") -> bool:
    """True when ``value`` (assigned to a secret-looking name) could be a real credential;
    ``data`` when it sits in a data format (YAML, INI, JSON ...), where names are values too."""
    if len(value) < 6 or "«" in value or any(ch.isspace() for ch in value):
        return False
    low = value.lower()
    if low in _NOT_SECRET_VALUES or "redacted" in low or any(p in low for p in _PLACEHOLDER_PARTS):
        return False
    if (
        _is_template(value)
        or _REGEX_RE.search(value)
        or low.startswith(("/", "./", "../", "~/", "http://", "https://", "file:"))
    ):
        return False
    has_digit = _has_digit(value)
    if (value[0] in "<[" and value[-1] in ">]") or (
        not has_digit and not value[0].isalnum() and not value[-1].isalnum()
    ):
        return False  # markup or a sentinel: "</s>", "<|image_pad|>", "[MASK]", "|SPEAKER|", "__end__"
    if _ESCAPES_RE.fullmatch(value) or _COLOUR_RE.fullmatch(value):
        return False  # a character written as escapes ("\u0120"), a colour ("#f8f8f2")
    if (not quoted or value_quote == "`") and (value[0] in "!&*@%" or any(ch in _BRACKETS for ch in value)):
        return False  # a YAML tag or anchor, or an expression in a document's code sample
    if not data and _IDENTIFIER_RE.fullmatch(value) is not None:
        return False  # a name ("password_confirm", "settings.SECRET_KEY", "LlamaTokenizer")
    if value.replace(".", "").replace("_", "").isdigit() and (quoted or len(value) < 8):
        return False  # a number or a version
    # Random enough: letters mixed with digits or symbols; or letters (and separators) only,
    # long and varied, and in code not all lower case (that is a word: "downgrades").
    letters = value.replace("_", "").replace("-", "").replace(".", "")
    if any(ch.isalpha() for ch in value) and not letters.isalpha() and len(set(value)) >= 4:
        return True
    if not data and letters.islower():
        return False
    return len(letters) >= 10 and shannon_entropy(letters) >= _MIN_ENTROPY


_MIN_ENTROPY = 3.0  # bits per character: "aaaaaaaaaa" 0, "secretsecret" 2.3, "OYASECRETMARKER" 3.1


def _line_bounds(text: str, low: str) -> list[tuple[int, int]]:
    """(start, end) of every line holding a keyword, in order, each once."""
    starts: set[int] = set()
    for word in _KEYWORDS:
        i = low.find(word)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            starts.add(start)
            end = text.find("\n", i)
            i = low.find(word, len(text) if end < 0 else end)
    out = []
    for start in sorted(starts):
        end = text.find("\n", start)
        out.append((start, len(text) if end < 0 else end))
    return out


def _has_digit(value: str) -> bool:
    return any(ch.isdigit() for ch in value)


def _call_argument(text: str, name_start: int, close: str) -> bool:
    """True when the name is a quoted first argument: ``getenv("TOKEN", ...)``."""
    return bool(close) and name_start >= 2 and text[name_start - 2] == "(" and text[name_start - 1] == close


def _assignment_findings(text: str, line: tuple[int, int], language: str | None) -> list[Finding]:
    start, end = line
    config, data = language in _CONFIG_LANGUAGES, language in _DATA_LANGUAGES
    out = []
    for m in _ASSIGN_RE.finditer(text, start, end):
        op = m.group("op")
        if op == "," and (
            m.group("name") == "auth"
            or not m.group("name").replace("_", "").isalnum()
            or not _call_argument(text, m.start("name"), m.group("close"))
        ):
            continue  # setdefault("PASSWORD", "x") is a key and its value; f(password, "x") is not
        if not secret_name(m.group("name")):
            continue
        if m.group("qv") is not None:
            value = m.group("qv")
            if op in ("==", "!=") and not (_has_digit(value) and any(ch.isalpha() for ch in value)):
                continue  # a comparison with a sentinel: token == "NOTPROVIDED", token == "#bygroup"
            if credential_value(value, quoted=True, data=data, value_quote=m.group("q")):
                out.append(Finding("secret_assignment", m.start("qv"), m.end("qv")))
        elif config and op in (":", "=", ":=") and m.group("bare"):
            bare = m.group("bare").rstrip(",;")
            if credential_value(bare, quoted=False, data=data):
                out.append(Finding("secret_assignment", m.start("bare"), m.start("bare") + len(bare)))
    for m in _SPACED_RE.finditer(text, start, end):
        if secret_name(m.group("name")) and credential_value(m.group("bare"), quoted=False, data=data):
            out.append(Finding("secret_assignment", m.start("bare"), m.end("bare")))
    for m in itertools.chain(_ANNOTATED_RE.finditer(text, start, end), _DEFINE_RE.finditer(text, start, end)):
        if secret_name(m.group("name")) and credential_value(m.group("qv"), quoted=True):
            out.append(Finding("secret_assignment", m.start("qv"), m.end("qv")))
    return out


def _header_findings(text: str, line: tuple[int, int]) -> list[Finding]:
    out = []
    for m in _HEADER_RE.finditer(text, *line):
        value = m.group("v")
        if _IDENTIFIER_RE.fullmatch(value) or value.lower() in _NOT_SECRET_VALUES:
            continue
        if any(ch.isdigit() for ch in value) or shannon_entropy(value) >= 3.5:
            out.append(Finding("authorization_header", m.start("v"), m.end("v")))
    return out


# --- entry points -----------------------------------------------------------------------


def find_secrets(text: str, language: str | None = None) -> list[Finding]:
    """Every secret value in ``text``, sorted by position, overlaps merged (first rule wins)."""
    low = text.lower()
    found = _token_findings(text) + _url_findings(text)
    for line in _line_bounds(text, low):
        found += _assignment_findings(text, line, language)
        if "auth" in low[line[0] : line[1]] or "bearer" in low[line[0] : line[1]]:
            found += _header_findings(text, line)
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.rule, last.start, f.end)
            continue
        merged.append(f)
    return merged


def redact(text: str, language: str | None = None) -> Redaction:
    """``text`` with every secret value replaced by a marker; line count unchanged."""
    findings = find_secrets(text, language)
    if not findings:
        return Redaction(text, {}, 0)
    parts: list[str] = []
    pos = line_no = 0
    lines: set[int] = set()
    for f in findings:
        parts.append(text[pos : f.start])
        marker = MARKER.format(rule=f.rule)
        # one marker per line of the secret, so line numbers after it do not move
        pieces = text[f.start : f.end].split("\n")
        parts.append("\n".join(marker if piece else "" for piece in pieces))
        line_no += text.count("\n", pos, f.start)
        lines.update(line_no + i for i, piece in enumerate(pieces) if piece)
        line_no += len(pieces) - 1
        pos = f.end
    parts.append(text[pos:])
    return Redaction("".join(parts), dict(sorted(Counter(f.rule for f in findings).items())), len(lines))
